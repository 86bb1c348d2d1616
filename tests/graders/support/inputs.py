"""Seeded input builders shared by the graders.

Every builder draws from the numpy Generator it is given (the `rng` fixture), so a test's inputs
depend only on its seed, never on the order tests run in or on torch's global generator.

Symbols: B batch, L query length, S key/value length, d_model width, d_k query/key width,
d_v value width, d_ff feed-forward inner width, h heads.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch

__all__ = [
    "array",
    "key_mask",
    "like_state",
    "mha_state",
    "padding_mask",
    "permutation",
    "tensor",
    "to_numpy",
]


def array(rng: np.random.Generator, *shape: int, scale: float = 1.0) -> np.ndarray:
    """A float64 array of the given shape with standard-normal entries times `scale`."""
    return rng.standard_normal(shape) * scale


def tensor(
    rng: np.random.Generator, *shape: int, scale: float = 1.0, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """A torch tensor of the given shape (float32 unless told), drawn from `rng`."""
    return torch.from_numpy(array(rng, *shape, scale=scale)).to(dtype)


def key_mask(
    rng: np.random.Generator, *shape: int, keep: float = 0.6, blank_rows: int = 0
) -> np.ndarray:
    """A boolean mask `(..., L, S)`, True where a query may attend to a key.

    Every query row keeps at least one key and (when S >= 2) hides at least one, so the mask
    and its inverse both matter and neither leaves a query without keys; except the first
    `blank_rows` query rows of the first matrix, which are entirely False (fully masked).
    """
    mask = rng.random(shape) < keep
    flat = mask.reshape(-1, shape[-1])  # (rows, S), a view
    for row in flat:
        if not row.any():
            row[rng.integers(shape[-1])] = True
        if row.all() and row.size > 1:
            row[rng.integers(row.size)] = False
    first = mask.reshape(-1, shape[-2], shape[-1])[0]  # (L, S), a view of the first matrix
    first[:blank_rows] = False
    return mask


def padding_mask(rng: np.random.Generator, *batch: int, length: int) -> np.ndarray:
    """A key padding mask `(*batch, 1, length)`: True for each sequence's real tokens, False for
    the padding after them; it broadcasts over the queries (axis -2).

    Every sequence pads at least one token (when length >= 2) and keeps at least two (when
    length >= 3), so the mask, its inverse, its transpose onto the queries and the scale of the
    scores all change the result.
    """
    fewest = 2 if length >= 3 else 1
    keep = rng.integers(fewest, max(length, 2), size=(*batch, 1, 1))  # real tokens per sequence
    return np.arange(length) < keep  # (*batch, 1, length)


def permutation(rng: np.random.Generator, n: int) -> np.ndarray:
    """A permutation of range(n) that moves at least one element (n >= 2)."""
    while True:
        perm = rng.permutation(n)
        if n < 2 or (perm != np.arange(n)).any():
            return perm


def mha_state(rng: np.random.Generator, d_model: int, bias: bool = True) -> dict[str, torch.Tensor]:
    """A MultiHeadAttention state dict with the contract's names (W_q, W_k, W_v, W_o)."""
    state = {}
    for name in ("W_q", "W_k", "W_v", "W_o"):
        state[f"{name}.weight"] = tensor(rng, d_model, d_model, scale=d_model**-0.5)
        if bias:
            state[f"{name}.bias"] = tensor(rng, d_model, scale=0.1)
    return state


def like_state(
    rng: np.random.Generator, state: Mapping[str, torch.Tensor]
) -> dict[str, torch.Tensor]:
    """A fresh state dict with the same names, shapes and dtypes as `state`, drawn from `rng`.

    LayerNorm weights (names ending in "norm.weight") are drawn near 1 and every other tensor
    near 0 with a spread of 1/sqrt(fan-in), so that stacked layers stay well scaled.
    """
    fresh = {}
    for name, value in state.items():
        shape = tuple(value.shape)
        if name.endswith("norm.weight"):
            draw = 1.0 + 0.2 * array(rng, *shape)
        elif name.endswith("norm.bias") or len(shape) < 2:
            draw = array(rng, *shape, scale=0.1)
        else:
            draw = array(rng, *shape, scale=shape[-1] ** -0.5)
        fresh[name] = torch.from_numpy(draw).to(value.dtype)
    return fresh


def to_numpy(value: torch.Tensor | np.ndarray) -> np.ndarray:
    """A float64 numpy copy of a tensor or array (for comparisons in the trusted process)."""
    if isinstance(value, torch.Tensor):
        return value.detach().to(torch.float64).numpy()
    return np.asarray(value, dtype=np.float64)
