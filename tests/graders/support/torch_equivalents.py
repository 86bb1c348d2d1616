"""PyTorch built-ins equivalent to the contract's modules, loaded from a contract state dict.

- The graders (and tests/reference) compare a t101 module with the torch built-in that computes
  the same function. Every builder takes a state dict with the contract's parameter names
  (design/STUDENT_API.md: `W_q.weight`, `self_attn.W_o.bias`, `layers.0.<...>`), so a
  reference's `state_dict()` and one copied back from a learner's module both work.
- Each builder returns the built-in in eval() mode, dropout 0, in the state dict's dtype.
- Masks: a contract mask is True where the query MAY attend; nn.MultiheadAttention and
  nn.TransformerEncoder read True as may NOT. `to_torch_attn_mask` inverts a contract mask and
  lays it out as (B*h, L, S). A fully masked query gives NaN in the built-ins (zeros in the
  contract): compare such rows only against the contract's zeros.

Symbols: B batch, L query length, S key/value length, d_model width, h heads, d_ff inner width.
Every state dict name, and why (B*h, L, S):
docs/internals/notebook-mistakes.md#torch-built-ins-from-a-contract-state-dict.
"""

from __future__ import annotations

from collections.abc import Mapping

import torch
from torch import nn

__all__ = [
    "invert_mask",
    "mha_state_to_torch",
    "encoder_layer_state_to_torch",
    "to_torch_attn_mask",
    "torch_encoder_forward",
    "torch_encoder_from",
    "torch_encoder_layer_from",
    "torch_mha_forward",
    "torch_mha_from",
]

StateDict = Mapping[str, torch.Tensor]

# contract name (inside an EncoderLayer, outside self_attn) -> nn.TransformerEncoderLayer name
_LAYER_NAMES = {
    "add_norm_1.norm.weight": "norm1.weight",
    "add_norm_1.norm.bias": "norm1.bias",
    "feed_forward.W_1.weight": "linear1.weight",
    "feed_forward.W_1.bias": "linear1.bias",
    "feed_forward.W_2.weight": "linear2.weight",
    "feed_forward.W_2.bias": "linear2.bias",
    "add_norm_2.norm.weight": "norm2.weight",
    "add_norm_2.norm.bias": "norm2.bias",
}


def _get(state: StateDict, name: str, what: str) -> torch.Tensor:
    if name not in state:
        present = ", ".join(sorted(state)) or "nothing"
        raise KeyError(
            f"{what}: expected a parameter named {name!r} in the state dict, got only {present}."
        )
    return state[name].detach()


def _sub(state: StateDict, prefix: str) -> dict[str, torch.Tensor]:
    """The entries of `state` under `prefix` ("layers.0."), with the prefix removed."""
    return {k[len(prefix) :]: v for k, v in state.items() if k.startswith(prefix)}


def _dtype(state: StateDict, name: str, what: str) -> torch.dtype:
    return _get(state, name, what).dtype


BAD_MASK = "Expected a mask broadcastable to {expected} (B, h, L, S); got shape {got}."


def torch_attn_mask(mask, batch: int, heads: int, queries: int, keys: int) -> torch.Tensor | None:
    """A contract mask (True = may attend) as the (B*h, L, S) bool mask torch's attention
    modules read (True = may NOT attend); None stays None. The mask may be (L, S), (B, L, S)
    (shared by the heads) or (B, h, L, S); ValueError (a sentence) when it does not broadcast."""
    if mask is None:
        return None
    m = torch.as_tensor(mask).bool()
    if m.dim() == 3:
        m = m.unsqueeze(1)  # (B, 1, L, S): one mask per batch element, shared by the heads
    try:
        m = m.expand(batch, heads, queries, keys)
    except RuntimeError:
        expected = (batch, heads, queries, keys)
        raise ValueError(BAD_MASK.format(expected=expected, got=tuple(m.shape))) from None
    return (~m).reshape(batch * heads, queries, keys)


def new_torch_encoder_layer(
    d_model: int, num_heads: int, d_ff: int, eps: float
) -> nn.TransformerEncoderLayer:
    """nn.TransformerEncoderLayer as the contract's EncoderLayer: ReLU, post-norm, batch_first,
    no dropout."""
    return nn.TransformerEncoderLayer(
        d_model,
        num_heads,
        d_ff,
        dropout=0.0,
        activation="relu",
        layer_norm_eps=eps,
        batch_first=True,
        norm_first=False,
    )


def invert_mask(mask: torch.Tensor | None) -> torch.Tensor | None:
    """Contract mask (True = may attend) -> nn.MultiheadAttention mask (True = may not)."""
    if mask is None:
        return None
    return ~torch.as_tensor(mask).bool()


def to_torch_attn_mask(
    mask: torch.Tensor | None, batch_size: int, num_heads: int, tgt_len: int, src_len: int
) -> torch.Tensor | None:
    """Invert a contract mask and lay it out as nn.MultiheadAttention's 3-D `attn_mask`.

    Shape:
        mask: broadcastable to (B, h, L, S) the contract's way: (L, S), (B, L, S) (one mask per
            batch element, shared by the heads; the head axis is inserted), or (B, h, L, S).
        returns: (B*h, L, S) bool, True where the query may NOT attend.
    """
    return torch_attn_mask(mask, batch_size, num_heads, tgt_len, src_len)


def mha_state_to_torch(state: StateDict, bias: bool) -> dict[str, torch.Tensor]:
    """Contract MultiHeadAttention names -> nn.MultiheadAttention names (packed in_proj)."""
    what = "mha_state_to_torch"
    out = {
        "in_proj_weight": torch.cat([_get(state, f"W_{p}.weight", what) for p in "qkv"], dim=0),
        "out_proj.weight": _get(state, "W_o.weight", what),
    }
    if bias:
        out["in_proj_bias"] = torch.cat([_get(state, f"W_{p}.bias", what) for p in "qkv"], dim=0)
        out["out_proj.bias"] = _get(state, "W_o.bias", what)
    return out


def encoder_layer_state_to_torch(state: StateDict) -> dict[str, torch.Tensor]:
    """Contract EncoderLayer names -> nn.TransformerEncoderLayer names."""
    what = "encoder_layer_state_to_torch"
    out = {
        f"self_attn.{k}": v for k, v in mha_state_to_torch(_sub(state, "self_attn."), True).items()
    }
    out.update({theirs: _get(state, ours, what) for ours, theirs in _LAYER_NAMES.items()})
    return out


def _no_global_draws():
    """Leave torch's global generator as it was: a built-in's random initial weights, which a
    builder replaces at once, must not shift a test's later draws (nor make a caller impure for
    autograder.expected)."""
    return torch.random.fork_rng(devices=[])


def _infer_bias(state: StateDict, bias: bool | None) -> bool:
    return ("W_q.bias" in state) if bias is None else bias


def torch_mha_from(
    mha_state_dict: StateDict, d_model: int, num_heads: int, bias: bool | None = None
) -> nn.MultiheadAttention:
    """nn.MultiheadAttention(d_model, num_heads, bias=bias, batch_first=True) with the weights
    of a contract MultiHeadAttention (bias=None: bias iff the state dict has W_q.bias)."""
    bias = _infer_bias(mha_state_dict, bias)
    dtype = _dtype(mha_state_dict, "W_q.weight", "torch_mha_from")
    with _no_global_draws():  # its random initial weights are replaced below
        mha = nn.MultiheadAttention(d_model, num_heads, dropout=0.0, bias=bias, batch_first=True)
    mha.to(dtype)  # before loading: a float64 state loaded into float32 would be rounded
    mha.load_state_dict(mha_state_to_torch(mha_state_dict, bias), strict=True)
    return mha.eval()


def torch_encoder_layer_from(
    layer_state_dict: StateDict, d_model: int, num_heads: int, d_ff: int, eps: float = 1e-5
) -> nn.TransformerEncoderLayer:
    """nn.TransformerEncoderLayer (relu, post-norm, batch_first, dropout 0) with the weights of
    a contract EncoderLayer."""
    dtype = _dtype(layer_state_dict, "self_attn.W_q.weight", "torch_encoder_layer_from")
    with _no_global_draws():  # its random initial weights are replaced below
        layer = new_torch_encoder_layer(d_model, num_heads, d_ff, eps)
    layer.to(dtype)  # before loading: a float64 state loaded into float32 would be rounded
    layer.load_state_dict(encoder_layer_state_to_torch(layer_state_dict), strict=True)
    return layer.eval()


def torch_encoder_from(
    encoder_state_dict: StateDict,
    num_layers: int,
    d_model: int,
    num_heads: int,
    d_ff: int,
    eps: float = 1e-5,
) -> nn.TransformerEncoder:
    """nn.TransformerEncoder of `num_layers` such layers (no final norm, no nested tensors) with
    the weights of a contract Encoder (`layers.<i>.<EncoderLayer names>`)."""
    dtype = _dtype(encoder_state_dict, "layers.0.self_attn.W_q.weight", "torch_encoder_from")
    with _no_global_draws():  # its random initial weights are replaced below
        layer = new_torch_encoder_layer(d_model, num_heads, d_ff, eps)
        encoder = nn.TransformerEncoder(layer, num_layers, enable_nested_tensor=False)
    state = {}
    for i in range(num_layers):
        layer_state = encoder_layer_state_to_torch(_sub(encoder_state_dict, f"layers.{i}."))
        state.update({f"layers.{i}.{k}": v for k, v in layer_state.items()})
    encoder.to(dtype)  # before loading: a float64 state loaded into float32 would be rounded
    encoder.load_state_dict(state, strict=True)
    return encoder.eval()


def torch_mha_forward(
    mha: nn.MultiheadAttention,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Call the built-in the contract's way: returns (output (B, L, d_model), weights
    (B, h, L, S)); `mask` is a contract mask (True = may attend)."""
    B, L, S = query.shape[0], query.shape[1], key.shape[1]
    attn_mask = to_torch_attn_mask(mask, B, mha.num_heads, L, S)
    out, weights = mha(
        query, key, value, attn_mask=attn_mask, need_weights=True, average_attn_weights=False
    )
    return out, weights


def torch_encoder_forward(
    module: nn.TransformerEncoderLayer | nn.TransformerEncoder,
    x: torch.Tensor,
    mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """Call a built-in encoder layer or stack with a contract mask (True = may attend)."""
    first = module.layers[0] if isinstance(module, nn.TransformerEncoder) else module
    B, L = x.shape[0], x.shape[1]
    src_mask = to_torch_attn_mask(mask, B, first.self_attn.num_heads, L, L)
    if isinstance(module, nn.TransformerEncoder):
        return module(x, mask=src_mask)
    return module(x, src_mask=src_mask)
