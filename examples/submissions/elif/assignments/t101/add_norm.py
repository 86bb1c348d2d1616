import torch.nn as nn


class AddNorm(nn.Module):
    def __init__(self, d_model, dropout=0.0, eps=1e-5):
        super().__init__()
        self.norm = nn.LayerNorm(d_model, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, sublayer_output):
        residual = x + self.dropout(sublayer_output)
        return self.norm(residual)
