from torch import nn


class AddNorm(nn.Module):
    def __init__(self, d_model, dropout=0.0, eps=1e-5):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.norm = nn.LayerNorm(d_model, eps=eps)

    def forward(self, x, sublayer_output):
        return self.norm(x + self.dropout(sublayer_output))
