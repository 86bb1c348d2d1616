"""The feed-forward after huggingface/transformers (models/bert/modeling_bert.py,
BertIntermediate and the dense of BertOutput): dense to the intermediate size, BERT's hidden_act
"gelu" (ACT2FN's GELUActivation: the exact, erf GELU), dense back. BERT's hidden dropout acts in
BertOutput after the second dense, with the residual and LayerNorm (the contract's AddNorm), so
none acts between the two linears; the contract's dropout argument is taken and not used. The
two denses are the contract's W_1 and W_2."""

from torch import nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        self.W_1 = nn.Linear(d_model, d_ff)
        self.intermediate_act_fn = nn.functional.gelu
        self.W_2 = nn.Linear(d_ff, d_model)

    def forward(self, hidden_states):
        hidden_states = self.W_1(hidden_states)
        hidden_states = self.intermediate_act_fn(hidden_states)
        return self.W_2(hidden_states)
