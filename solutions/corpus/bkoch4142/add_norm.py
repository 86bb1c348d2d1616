"""Add & Norm after bkoch4142/attention-is-all-you-need-paper
(src/architectures/add_and_norm.py, AddAndNorm, and the dropout the encoder block applies to a
sublayer's output before it, src/architectures/transformer_encoder.py): layer_norm(x +
dropout(sublayer_output)), its nn.LayerNorm(d_model) with PyTorch's default eps, whatever eps is
given. layer_norm is the contract's norm; the block's dropout_layer_1 (or _2) is this module's
dropout."""

from torch import nn


class AddNorm(nn.Module):
    def __init__(self, d_model, dropout=0.0, eps=1e-5):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, residual):
        return self.norm(x + self.dropout(residual))
