import torch.nn as nn


class AddNorm(nn.Module):
    """LayerNorm(x + Dropout(sublayer(x)))"""

    def __init__(self, d_model, dropout=0.0, eps=1e-5):
        super().__init__()
        self.norm = nn.LayerNorm(d_model, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, sublayer_output):
        return self.norm(x + self.dropout(sublayer_output))
