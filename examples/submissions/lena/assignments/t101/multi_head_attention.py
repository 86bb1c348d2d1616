import torch
import torch.nn as nn


class MultiHeadAttention(nn.Module):
    """My own projections, and PyTorch's MultiheadAttention for the attention part in the middle.

    (I did the projections myself so the parameters have the names the assignment wants.)
    """

    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}.")
        self.d_model = d_model
        self.num_heads = num_heads
        self.p_drop = dropout
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)

    def _attention(self, dtype):
        # identity projections inside, so it only does softmax(QK^T/sqrt(d_k))V per head
        mha = nn.MultiheadAttention(
            self.d_model, self.num_heads, dropout=self.p_drop, bias=False, batch_first=True,
            dtype=dtype,
        )
        eye = torch.eye(self.d_model, dtype=dtype)
        with torch.no_grad():
            mha.in_proj_weight.copy_(torch.cat([eye, eye, eye]))
            mha.out_proj.weight.copy_(eye)
        mha.requires_grad_(False)
        mha.train(self.training)
        return mha

    def forward(self, query, key, value, mask=None):
        B, L, _ = query.shape
        S = key.shape[1]
        q, k, v = self.W_q(query), self.W_k(key), self.W_v(value)

        attn_mask, dead = None, None
        if mask is not None:
            # everything to (B, h, L, S) so it fits torch's (B*h, L, S) attn_mask
            while mask.dim() < 4:
                mask = mask.unsqueeze(0) if mask.dim() == 2 else mask.unsqueeze(1)
            mask = mask.expand(B, self.num_heads, L, S)
            # rows with no allowed key give nan in torch, so let them see everything and zero them after
            dead = ~mask.any(dim=-1, keepdim=True)                     # (B, h, L, 1)
            # torch uses True = NOT allowed, the course uses True = allowed -> flip it
            attn_mask = ~(mask | dead).reshape(B * self.num_heads, L, S)

        out, weights = self._attention(q.dtype)(
            q, k, v, attn_mask=attn_mask, need_weights=True, average_attn_weights=False
        )
        if dead is not None:
            weights = weights.masked_fill(dead, 0.0)
            per_head = out.view(B, L, self.num_heads, -1)              # (B, L, h, d_k)
            out = per_head.masked_fill(dead.transpose(1, 2), 0.0).view(B, L, self.d_model)
        return self.W_o(out), weights
