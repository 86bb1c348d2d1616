"""The worker fork server's warm-up: torch's lazy first-call work done once, before any fork.

torch initialises much on first use: operator dispatch entries, CPU kernels per dtype, the
autograd engine and its backward functions, module machinery. A process that imported torch
but ran nothing pays ~25 ms of CPU for that the first time learner code and the worker's own
operations run, and every fork of the zygote would pay it again. ``run`` does it once in the
zygote, so each worker inherits the initialised state copy-on-write.

The workload is fixed and data-free: constant-filled tensors of a few elements, the modules and
functions the course's learner code and the worker's operations use (Linear, LayerNorm, ReLU,
Dropout, MultiheadAttention, TransformerEncoderLayer, softmax, masks, matmul, reshape and
transpose), forward and backward, float32 and float64, numpy round trips and the wire codec.
It reads no file and holds no course, grader, reference or learner data (SECURITY.md, "Warm
workers"). It leaves no trace a worker could see: torch's and numpy's random states, the
default dtype, grad mode and the thread count are as before (``test_runtime_warmup.py``), and
nothing it builds is kept.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from autograder.runtime import standins, wire


def run() -> None:
    """Run the warm-up workload once, leaving torch's and numpy's global state as it was."""
    torch_rng = torch.random.get_rng_state()
    numpy_rng = np.random.get_state()
    default_dtype = torch.get_default_dtype()
    grad_enabled = torch.is_grad_enabled()
    threads = torch.get_num_threads()
    try:
        torch.set_grad_enabled(True)
        for dtype in (torch.float32, torch.float64):
            _functions(dtype)
            _modules(dtype)
        _standins()
        _codec()
    finally:
        torch.random.set_rng_state(torch_rng)
        np.random.set_state(numpy_rng)
        torch.set_default_dtype(default_dtype)
        torch.set_grad_enabled(grad_enabled)
        torch.set_num_threads(threads)


def _functions(dtype: torch.dtype) -> None:
    """The tensor functions of softmax, attention, feed-forward and Add & Norm code, with grad."""
    x = torch.linspace(-1.0, 1.0, 24, dtype=dtype).reshape(2, 3, 4).requires_grad_()
    keys = torch.ones(2, 5, 4, dtype=dtype)
    mask = torch.ones(3, 5, dtype=torch.bool).tril()
    scores = x @ keys.transpose(-2, -1) / torch.sqrt(torch.tensor(4.0, dtype=dtype))
    scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    stable = torch.exp(scores - scores.max(dim=-1, keepdim=True).values)
    weights = weights + stable / stable.sum(dim=-1, keepdim=True)
    out = torch.matmul(weights, keys) + torch.bmm(weights, keys)
    out = out.view(2, 3, 2, 2).permute(0, 2, 1, 3).contiguous().reshape(2, 3, 4)
    mean = out.mean(dim=-1, keepdim=True)
    var = out.var(dim=-1, keepdim=True, unbiased=False)
    out = (out - mean) / torch.sqrt(var + 1e-5)
    out = torch.relu(out) + nn.functional.gelu(out) + torch.where(out > 0, out, 0.0 * out)
    out = nn.functional.layer_norm(out, (4,)) + nn.functional.softmax(out, dim=1)
    out = out + nn.functional.scaled_dot_product_attention(x, keys, keys, attn_mask=mask)
    out.sum().backward()
    torch.cat([out, out], dim=0).split(2)[0].detach().clone().numpy()
    torch.stack([x.detach(), x.detach()]).chunk(2)[1].squeeze(0).unsqueeze(-1)
    torch.allclose(out, out.detach()) and torch.isfinite(out).all().item()


def _modules(dtype: torch.dtype) -> None:
    """Module construction (with its weight initialisation), forward and backward."""
    x = torch.ones(2, 3, 4, dtype=dtype, requires_grad=True)
    linear = nn.Linear(4, 8, dtype=dtype)
    ffn = nn.Sequential(linear, nn.ReLU(), nn.Dropout(0.0), nn.Linear(8, 4, dtype=dtype))
    norm = nn.LayerNorm(4, dtype=dtype)
    attention = nn.MultiheadAttention(4, 2, batch_first=True, dtype=dtype)
    layers = nn.ModuleList([ffn, norm, attention])
    mask = torch.ones(3, 3, dtype=torch.bool).triu(1)
    out, weights = attention(x, x, x, attn_mask=mask)
    out = norm(x + ffn(out)) + weights.sum()
    out.sum().backward()
    state = layers.state_dict()
    layers.load_state_dict(state)
    layers.eval()
    with torch.no_grad():
        attention(x, x, x, need_weights=False)
    for _, p in layers.named_parameters():
        p.grad = None
        p.untyped_storage().data_ptr()


def _standins() -> None:
    """The worker's stand-ins built, loaded and run, as op_set_standins does."""
    x = torch.ones(2, 3, 4)
    mask = torch.ones(3, 3, dtype=torch.bool).tril()
    configs = {
        "multi_head_attention": {"d_model": 4, "num_heads": 2, "bias": True},
        "feed_forward": {"d_model": 4, "d_ff": 8},
        "add_norm": {"d_model": 4, "eps": 1e-5},
        "encoder_layer": {"d_model": 4, "num_heads": 2, "d_ff": 8, "eps": 1e-5},
    }
    for kind, config in configs.items():
        module = standins.build(kind, config)
        module = standins.build(kind, config, module.state_dict())
        if kind == "multi_head_attention":
            module(x, x, x, mask)
        elif kind == "add_norm":
            module(x, x)
        elif kind == "encoder_layer":
            module(x, mask)
        else:
            module(x)


def _codec() -> None:
    """Arrays, tensors and plain values through the wire codec both ways."""
    tree = {
        "arrays": [np.ones((2, 3), dtype=dtype) for dtype in ("float32", "float64", "int64")],
        "tensors": [torch.ones(2, 3, dtype=dtype) for dtype in (torch.float32, torch.float64)],
        "mask": torch.ones(2, 2, dtype=torch.bool),
        "plain": (1, 2.5, "text", None, True, [np.float64(1.0)]),
    }
    decoded = wire.decode(wire.loads(wire.dumps(wire.encode(tree))))
    torch.from_numpy(decoded["arrays"][1]).to(torch.float32).numpy()
    torch.as_tensor(decoded["arrays"][0]).requires_grad_().sum().backward()
