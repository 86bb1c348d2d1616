"""Add & Norm after huggingface/transformers (models/bert/modeling_bert.py, BertSelfOutput and
BertOutput): LayerNorm(dropout(hidden_states) + input_tensor), with BERT's layer_norm_eps of
1e-12 (BertConfig's default). BERT's dense projection belongs to the sublayer here (the
contract's sublayer_output is already projected); LayerNorm is the contract's norm. The
contract's eps argument is taken and not used."""

from torch import nn


class AddNorm(nn.Module):
    def __init__(self, d_model, dropout=0.0, eps=1e-5):
        super().__init__()
        self.norm = nn.LayerNorm(d_model, eps=1e-12)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, sublayer_output):
        hidden_states = self.dropout(sublayer_output)
        return self.norm(hidden_states + x)
