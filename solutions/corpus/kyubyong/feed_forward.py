"""The feed-forward network after Kyubyong/transformer (modules.py, ff and ln; TensorFlow 1,
its math written again in PyTorch): a dense layer of d_ff units with a ReLU, a dense layer back
to d_model, the input added back, then ln, the repository's layer normalisation (gamma, beta,
the biased variance, epsilon 1e-8 inside the square root). No dropout anywhere.

The dense layers are the contract's W_1 and W_2 (num_units is [d_ff, d_model]); the contract's
dropout argument is taken and not used."""

import torch
from torch import nn


class Ln(nn.Module):
    def __init__(self, num_units, epsilon=1e-8):
        super().__init__()
        self.beta = nn.Parameter(torch.zeros(num_units))
        self.gamma = nn.Parameter(torch.ones(num_units))
        self.epsilon = epsilon

    def forward(self, inputs):
        mean = inputs.mean(dim=-1, keepdim=True)
        variance = ((inputs - mean) ** 2).mean(dim=-1, keepdim=True)
        normalized = (inputs - mean) / ((variance + self.epsilon) ** 0.5)
        return self.gamma * normalized + self.beta


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.W_1 = nn.Linear(d_model, d_ff)
        self.W_2 = nn.Linear(d_ff, d_model)
        self.ln = Ln(d_model)

    def forward(self, inputs):
        outputs = torch.relu(self.W_1(inputs))
        outputs = self.W_2(outputs)
        outputs = outputs + inputs
        return self.ln(outputs)
