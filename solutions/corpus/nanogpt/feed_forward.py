"""The feed-forward network after nanoGPT (karpathy, model.py, MLP): c_proj(gelu(c_fc(x))),
then dropout. c_fc and c_proj are the contract's W_1 (d_model -> d_ff, nanoGPT's 4 * n_embd)
and W_2."""

from torch import nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.W_1 = nn.Linear(d_model, d_ff)
        self.gelu = nn.GELU()
        self.W_2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        x = self.W_1(x)
        x = self.gelu(x)
        x = self.W_2(x)
        x = self.dropout(x)
        return x
