"""The feed-forward after karpathy/ng-video-lecture (gpt.py, FeedFoward): Linear(n_embd,
4 * n_embd), ReLU, Linear(4 * n_embd, n_embd), Dropout, in that order, so the dropout acts on
W_2's output. The inner width 4 * n_embd is the contract's d_ff; the lecture's nn.Sequential is
written out as calls so that its two linears are the contract's W_1 and W_2."""

from torch import nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.W_1 = nn.Linear(d_model, d_ff)
        self.relu = nn.ReLU()
        self.W_2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.W_2(self.relu(self.W_1(x))))
