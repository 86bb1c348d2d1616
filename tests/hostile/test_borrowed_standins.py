"""A submission that keeps the course's stand-ins and calls them in later tests, graded end to end.

The encoder's graders set known-good stand-ins into the learner's EncoderLayer, the attention's
a known-good softmax into attention.py. This submission implements only the encoder: its
EncoderLayer keeps the class of each stand-in it is handed (`type(x)`, nothing a static check
could flag), its other parts call the kept class's `forward` with their own parameters, and
attention.py keeps the softmax it is handed for softmax.py.

In one worker every hidden test of those parts passed (they run after all visible ones): 54 of
100 points for a submission that earns 30. It must score only what it implements: the encoder,
and the structure tests of the parts whose constructors it wrote.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STUBS = ROOT / "assignments" / "t101"

BORROWING_FORWARD = """
import torch
from torch import nn

_impl = None  # the stand-in's class, kept by encoder.py


class {name}(nn.Module):
    def __init__(self, {params}):
        super().__init__()
{body}

    def heads(self, x):
        return _impl.heads(self, x)

    def forward(self, *args):
        if _impl is None:
            raise NotImplementedError("{name}.forward is not implemented")
        return _impl.forward(self, *args)
"""

MHA_BODY = """\
        if d_model % num_heads:
            raise ValueError(f"d_model {d_model} is not divisible by num_heads {num_heads}")
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (
            nn.Linear(d_model, d_model, bias=bias) for _ in range(4)
        )
        self.dropout = nn.Dropout(dropout)"""
FF_BODY = """\
        self.W_1, self.W_2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)"""
AN_BODY = """\
        self.norm = nn.LayerNorm(d_model, eps=eps)
        self.dropout = nn.Dropout(dropout)"""

ENCODER = """
from torch import nn

from . import add_norm, feed_forward, multi_head_attention
from .add_norm import AddNorm
from .feed_forward import PositionwiseFeedForward
from .multi_head_attention import MultiHeadAttention


def _keep(module, part, own):
    if type(part) is not own and module._impl is None:
        module._impl = type(part)  # the grader's known-good part: kept for later tests


class EncoderLayer(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.add_norm_1 = AddNorm(d_model, dropout)
        self.feed_forward = PositionwiseFeedForward(d_model, d_ff, dropout)
        self.add_norm_2 = AddNorm(d_model, dropout)

    def forward(self, x, mask=None):
        _keep(multi_head_attention, self.self_attn, MultiHeadAttention)
        _keep(add_norm, self.add_norm_1, AddNorm)
        _keep(feed_forward, self.feed_forward, PositionwiseFeedForward)
        x = self.add_norm_1(x, self.self_attn(x, x, x, mask)[0])
        return self.add_norm_2(x, self.feed_forward(x))


class Encoder(nn.Module):
    def __init__(self, num_layers, d_model, num_heads, d_ff, dropout=0.0):
        super().__init__()
        self.layers = nn.ModuleList(
            [EncoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)]
        )

    def forward(self, x, mask=None):
        for layer in self.layers:
            x = layer(x, mask)
        return x
"""

SOFTMAX = """
_borrowed = None  # the known-good softmax, kept by attention.py


def softmax(x, axis=-1):
    if _borrowed is None:
        raise NotImplementedError("softmax is not implemented")
    return _borrowed(x, axis)
"""

# attention.py's stub, whose scaled_dot_product_attention first keeps the softmax it was handed
KEEP_SOFTMAX = """
from . import softmax as _softmax_module
from .softmax import softmax

_stub_sdpa = scaled_dot_product_attention


def scaled_dot_product_attention(Q, K, V, mask=None):
    if softmax is not _softmax_module.softmax:
        _softmax_module._borrowed = softmax
    return _stub_sdpa(Q, K, V, mask)
"""

FILES = {
    "multi_head_attention.py": BORROWING_FORWARD.format(
        name="MultiHeadAttention",
        params="d_model, num_heads, dropout=0.0, bias=True",
        body=MHA_BODY,
    ),
    "feed_forward.py": BORROWING_FORWARD.format(
        name="PositionwiseFeedForward", params="d_model, d_ff, dropout=0.0", body=FF_BODY
    ),
    "add_norm.py": BORROWING_FORWARD.format(
        name="AddNorm", params="d_model, dropout=0.0, eps=1e-5", body=AN_BODY
    ),
    "encoder.py": ENCODER,
    "softmax.py": SOFTMAX,
}

# What it earns: the whole encoder (25) and the constructor and structure tests of the parts it
# built (multi-head attention 3.85 of 25, feed-forward 1 of 10, Add & Norm 0.5 of 10); nothing
# of softmax or attention, whose functions it never wrote.
EARNED = {
    "softmax": 0.0,
    "attention": 0.0,
    "multi_head_attention": 25 * 6 / 39,
    "feed_forward": 1.0,
    "add_norm": 0.5,
    "encoder": 25.0,
}


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("borrowed")
    package = base / "learner" / "assignments" / "t101"
    shutil.copytree(STUBS, package)
    for name, source in FILES.items():
        (package / name).write_text(textwrap.dedent(source).lstrip())
    attention = package / "attention.py"
    attention.write_text(attention.read_text() + KEEP_SOFTMAX)
    out = base / "out"
    command = [sys.executable, "-m", "autograder", "grade", str(base / "learner")]
    command += ["--out", str(out), "-q"]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads((out / "results.json").read_text())


def scores(results: dict) -> dict[str, float]:
    by_component: dict[str, float] = dict.fromkeys(EARNED, 0.0)
    for test in results["tests"]:
        by_component[test["tags"][0]] += test["score"]
    return by_component


@pytest.mark.hostile
def test_kept_standins_earn_no_points_outside_the_encoder(results):
    assert scores(results) == pytest.approx(EARNED)
    # the hidden tests ran in a worker never handed a stand-in; the encoder's still pass
    hidden = [t for t in results["tests"] if t["visibility"] != "visible"]  # Gradescope's word
    encoder = [t for t in hidden if t["tags"] == ["encoder"]]
    assert encoder and all(t["score"] == t["max_score"] for t in encoder)
    assert results["score"] == pytest.approx(sum(EARNED.values()))
