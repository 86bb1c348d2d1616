"""Add & Norm after Kyubyong/transformer (modules.py, the end of multihead_attention and ff,
with ln; TensorFlow 1, its math written again in PyTorch): outputs += queries, then ln, the
repository's layer normalisation: gamma * (x - mean) / (variance + epsilon) ** 0.5 + beta over
the last axis, the biased variance of tf.nn.moments, epsilon fixed at 1e-8. No dropout: the
repository drops only the embeddings and the attention weights.

ln's variables are this Ln module's beta and gamma, kept as the contract's norm; the contract's
dropout and eps arguments are taken and not used."""

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


class AddNorm(nn.Module):
    def __init__(self, d_model, dropout=0.0, eps=1e-5):
        super().__init__()
        self.norm = Ln(d_model)

    def forward(self, x, sublayer_output):
        outputs = sublayer_output + x
        return self.norm(outputs)
