"""The checks of the nbgrader notebook: one graded cell per component, with its points.

Each cell is self-contained notebook code: it reaches the learner package as `t101` (imported by
the notebook's first cell) and compares against the PyTorch equivalents that our graders also
use (design/STUDENT_API.md, "Equivalences the graders rely on"). They are a subset of our
graders' checks (the main equivalence per component, no hidden edge cases), so the comparison
favours nbgrader, not us.
"""

from __future__ import annotations

SETUP = """\
import sys, importlib
sys.path.insert(0, {assignments!r})
import numpy as np, torch
t101 = importlib.import_module("t101")
from t101 import softmax, attention, multi_head_attention, feed_forward, add_norm, encoder
"""

CELLS: list[tuple[str, int, str]] = [
    (
        "softmax",
        10,
        """\
rng = np.random.default_rng(0)
x = rng.normal(size=(3, 4, 5))
got = softmax.softmax(x, axis=-1)
assert np.allclose(got, torch.softmax(torch.tensor(x), -1).numpy(), atol=1e-8)
assert np.allclose(softmax.softmax(np.array([1000.0, 1001.0])).sum(), 1.0)
""",
    ),
    (
        "attention",
        20,
        """\
rng = np.random.default_rng(1)
Q, K, V = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 6))
out, w = attention.scaled_dot_product_attention(Q, K, V)
ref = torch.nn.functional.scaled_dot_product_attention(*(torch.tensor(a) for a in (Q, K, V)))
assert w.shape == (2, 3, 5) and np.allclose(out, ref.numpy(), atol=1e-8)
""",
    ),
    (
        "multi_head_attention",
        25,
        """\
torch.manual_seed(0)
m = multi_head_attention.MultiHeadAttention(16, 4).eval()
ref = torch.nn.MultiheadAttention(16, 4, batch_first=True).eval()
with torch.no_grad():
    ref.in_proj_weight.copy_(torch.cat([m.W_q.weight, m.W_k.weight, m.W_v.weight]))
    ref.in_proj_bias.copy_(torch.cat([m.W_q.bias, m.W_k.bias, m.W_v.bias]))
    ref.out_proj.weight.copy_(m.W_o.weight); ref.out_proj.bias.copy_(m.W_o.bias)
    x = torch.randn(2, 5, 16)
    out, w = m(x, x, x)
    want, want_w = ref(x, x, x, average_attn_weights=False)
assert torch.allclose(out, want, atol=1e-5) and torch.allclose(w, want_w, atol=1e-5)
""",
    ),
    (
        "feed_forward",
        10,
        """\
torch.manual_seed(0)
f = feed_forward.PositionwiseFeedForward(8, 32).eval()
x = torch.randn(2, 3, 8)
with torch.no_grad():
    want = f.W_2(torch.relu(f.W_1(x)))
    assert torch.allclose(f(x), want, atol=1e-6)
""",
    ),
    (
        "add_norm",
        10,
        """\
torch.manual_seed(0)
a = add_norm.AddNorm(8).eval()
x, s = torch.randn(2, 3, 8), torch.randn(2, 3, 8)
with torch.no_grad():
    assert torch.allclose(a(x, s), torch.nn.functional.layer_norm(x + s, (8,)), atol=1e-5)
""",
    ),
    (
        "encoder",
        25,
        """\
torch.manual_seed(0)
e = encoder.Encoder(2, 16, 4, 32).eval()
assert e.layers[0].feed_forward.W_1.weight is not e.layers[1].feed_forward.W_1.weight
x = torch.randn(2, 5, 16)
with torch.no_grad():
    h = x
    for layer in e.layers:
        h2 = layer.add_norm_1(h, layer.self_attn(h, h, h)[0])
        h = layer.add_norm_2(h2, layer.feed_forward(h2))
    assert torch.allclose(e(x), h, atol=1e-5)
""",
    ),
]
