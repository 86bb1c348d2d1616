"""Add & Norm after gordicaleksa/pytorch-original-transformer
(models/definitions/transformer_model.py, SublayerLogic): its nn.LayerNorm(model_dimension)
(PyTorch's default eps, whatever eps is given) and its dropout on the sublayer's output before
the residual addition, here normalising after the addition as the contract's post-norm AddNorm
asks (the repository normalises the sublayer's input instead: "LayerNorm before instead of
after")."""

from torch import nn


class AddNorm(nn.Module):
    def __init__(self, d_model, dropout=0.0, eps=1e-5):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, representations_batch, sublayer_output):
        return self.norm(representations_batch + self.dropout(sublayer_output))
