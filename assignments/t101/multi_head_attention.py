"""Multi-head attention: h scaled dot-product attentions side by side, then one projection."""

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    """Multi-head attention (h heads of width d_k), as in the paper:

        MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_o
        head_i             = Attention(Q W_q^i, K W_k^i, V W_v^i)
        Attention(q, k, v) = softmax(q k^T / sqrt(d_k)) v     (softmax over the keys)

    Each head attends in its own d_k-wide slice of the projections: head i uses output rows
    i*d_k:(i+1)*d_k of W_q, W_k and W_v (the layout of nn.MultiheadAttention's packed
    `in_proj_weight`). The heads' outputs are concatenated in head order and projected by W_o.
    Dropout (probability `dropout`, active in train() only) is applied to the attention weights
    after the softmax, as nn.MultiheadAttention does; the returned weights are those used.

    Symbols:
        B batch, L query length, S key/value length, d_model model width,
        h = num_heads, d_k = d_v = d_model // h (the width of one head).

    Parameters, created in this order (so that a seeded run reproduces the same weights):
        W_q, W_k, W_v, W_o: each nn.Linear(d_model, d_model, bias=bias);
        then dropout = nn.Dropout(dropout) (no parameters).

    Shape:
        query: (B, L, d_model)    key: (B, S, d_model)    value: (B, S, d_model)
        mask: None, or bool broadcastable to (B, h, L, S): (L, S) for every batch element and
            head, (B, L, S) for one mask per batch element shared by the heads (the head axis is
            inserted), or (B, h, L, S). True = the query may attend to the key; False = it may
            not. A query whose keys are all masked gets all-zero weights and a zero attention
            output (so its output is W_o's bias), never NaN.
        returns: (output (B, L, d_model), weights (B, h, L, S)); weights are per head, not
            averaged.

    Dtypes: outputs follow the parameters' dtype (float32 by default; call .double() for
    float64).

    Raises:
        ValueError: when d_model is not divisible by num_heads (the sentence gives both numbers).

    Source: Vaswani et al. 2017, section 3.2.2; the PyTorch documentation page
    "torch.nn.MultiheadAttention" (with batch_first=True and average_attn_weights=False it
    computes the same function, with its boolean mask inverted).
    """

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0, bias: bool = True):
        raise NotImplementedError(
            "Multi-head attention: MultiHeadAttention.__init__"
            " is not implemented yet; write it in assignments/t101/multi_head_attention.py."
        )

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """query (B, L, d_model), key and value (B, S, d_model), mask None or bool
        broadcastable to (B, h, L, S) (True = may attend; a 3-D mask is (B, L, S))
        -> (output (B, L, d_model), weights (B, h, L, S))."""
        raise NotImplementedError(
            "Multi-head attention: MultiHeadAttention.forward"
            " is not implemented yet; write it in assignments/t101/multi_head_attention.py."
        )
