"""The feed-forward after lucidrains/vit-pytorch (vit_pytorch/vit.py, FeedForward): an
nn.Sequential of LayerNorm(dim), Linear(dim, hidden_dim), GELU, Dropout, Linear(hidden_dim,
dim), Dropout; the pre-norm LayerNorm lives inside the feed-forward. The Sequential is written
out as calls so that its two linears are the contract's W_1 and W_2 (hidden_dim is d_ff)."""

from torch import nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.W_1 = nn.Linear(d_model, d_ff)
        self.act = nn.GELU()
        self.drop_1 = nn.Dropout(dropout)
        self.W_2 = nn.Linear(d_ff, d_model)
        self.drop_2 = nn.Dropout(dropout)

    def forward(self, x):
        return self.drop_2(self.W_2(self.drop_1(self.act(self.W_1(self.norm(x))))))
