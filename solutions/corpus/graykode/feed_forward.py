"""The feed-forward network after graykode/nlp-tutorial (5-1.Transformer/Transformer.py,
PoswiseFeedForwardNet): two Conv1d of kernel size 1 over the input transposed to
(B, d_model, L), a ReLU between them, transposed back, then the sublayer's own residual and
LayerNorm: layer_norm(output + inputs). No dropout.

conv1 and conv2 are the contract's W_1 and W_2: nn.Linear modules whose weights, given a
kernel axis, are the convolutions' (a Conv1d's weight is (out, in, 1)); the convolutions are
computed as the tutorial computes them, with nn.functional.conv1d. The contract's dropout
argument is taken and not used."""

from torch import nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.W_1 = nn.Linear(d_model, d_ff)
        self.W_2 = nn.Linear(d_ff, d_model)
        self.layer_norm = nn.LayerNorm(d_model)

    def conv1(self, x):
        return nn.functional.conv1d(x, self.W_1.weight.unsqueeze(-1), self.W_1.bias)

    def conv2(self, x):
        return nn.functional.conv1d(x, self.W_2.weight.unsqueeze(-1), self.W_2.bias)

    def forward(self, inputs):
        residual = inputs
        output = nn.ReLU()(self.conv1(inputs.transpose(1, 2)))
        output = self.conv2(output).transpose(1, 2)
        return self.layer_norm(output + residual)
