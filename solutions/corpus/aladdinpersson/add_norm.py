"""Add & Norm after aladdinpersson/Machine-Learning-Collection (transformer_from_scratch.py,
TransformerBlock): dropout(norm1(attention + query)): the residual added, normalised by an
nn.LayerNorm(embed_size), then the dropout."""

from torch import nn


class AddNorm(nn.Module):
    def __init__(self, d_model, dropout=0.0, eps=1e-5):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, sublayer_output):
        return self.dropout(self.norm(sublayer_output + x))
