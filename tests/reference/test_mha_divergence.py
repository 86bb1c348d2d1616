"""support.divergence names the first step where a wrong multi-head attention leaves the
expected computation, and only a step it can tell apart.

Each case is a small multi-head attention written here in torch with one thing done wrong (the
way a learner might), run in this process; `locate` sees only its (output, weights), as a grader
does. Symbols: B batch, L queries, S keys, d_model width, h heads, d_k = d_model // h.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.feedback import hidden_context
from tests.graders.support.divergence import locate
from tests.graders.support.inputs import key_mask, mha_state, tensor

D, H = 16, 4
FOUND = "First difference found at"


def attention(state, h, q, k, v, mask, **wrong):
    """(output (B, L, D), weights (B, h, L, S)), with the mistakes named in `wrong`."""

    def project(x, name, transposed=False, bias=True):
        weight = state[f"{name}.weight"]
        return F.linear(
            x, weight.T if transposed else weight, state[f"{name}.bias"] if bias else None
        )

    def split(x):
        B, T, _ = x.shape
        if wrong.get("strided"):
            return x.view(B, T, D // h, h).permute(0, 3, 1, 2)
        return x.view(B, T, h, D // h).transpose(1, 2)

    t = wrong.get("qk_transposed", False)
    Q, K = split(project(q, "W_q", t)), split(project(k, "W_k", t))
    V = split(project(wrong.get("v_from", v), "W_v"))
    scores = (K @ Q.transpose(-2, -1)) if wrong.get("kq") else Q @ K.transpose(-2, -1)
    scores = scores * wrong.get("scale", 1 / math.sqrt(D // h)) + wrong.get("noise", 0.0)
    m = None if mask is None else (mask.unsqueeze(1) if mask.dim() == 3 else mask)
    if m is not None and not wrong.get("mask_after"):
        if not wrong.get("ignore_mask"):
            scores = scores.masked_fill(~m, float("-inf"))
    weights = torch.softmax(scores, dim=wrong.get("dim", -1))
    if m is not None and wrong.get("mask_after"):
        weights = weights * m
    elif m is not None and not wrong.get("keep_nan") and not wrong.get("ignore_mask"):
        weights = weights.masked_fill(~m, 0.0)
    heads = weights @ V
    if wrong.get("reversed_heads"):
        heads = heads.flip(1)
    concat = heads.transpose(1, 2).reshape(q.shape[0], q.shape[1], D)
    if wrong.get("after"):
        concat = wrong["after"](concat)
    out = project(concat, "W_o", wrong.get("o_transposed", False), not wrong.get("o_no_bias"))
    return out, weights


CASES = {
    "right": ({}, None),
    "scale 1/d_k": ({"scale": 1 / (D // H)}, (FOUND, "per-head scores", "another scale")),
    "softmax over queries": ({"dim": -2}, (FOUND, "the weights", "query axis")),
    "softmax over heads": ({"dim": 1}, (FOUND, "the weights", "head axis")),
    "mask ignored": ({"ignore_mask": True}, (FOUND, "per-head scores (the mask)")),
    "mask after softmax": ({"mask_after": True}, (FOUND, "the weights", "sum to 1")),
    "K Q^T": ({"kq": True}, (FOUND, "per-head scores", "K Q^T")),
    "W without .T": ({"qk_transposed": True}, (FOUND, "the projections", "without transposing")),
    "strided heads": ({"strided": True}, (FOUND, "the projections", "every h-th feature")),
    "reversed heads": ({"reversed_heads": True}, (FOUND, "the concatenation")),
    "W_o without bias": ({"o_no_bias": True}, (FOUND, "the output projection", "bias")),
    "W_o without .T": ({"o_transposed": True}, (FOUND, "the output projection", "W_o.weight")),
    "other scores": ({"noise": "noise"}, ("projections of the query and key or the per-head",)),
    "after the weights": (
        {"after": torch.tanh},
        ("the value projection, the concatenation or the output projection",),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_locates_the_first_wrong_step(case):
    rng = np.random.default_rng(7)
    wrong, phrases = CASES[case]
    state = mha_state(rng, D)
    x = tensor(rng, 2, 5, D)
    mask = torch.from_numpy(key_mask(rng, 2, 5, 5))
    if wrong.get("noise") == "noise":
        wrong = {"noise": tensor(rng, 2, H, 5, 5)}
    with torch.no_grad():
        out, weights = attention(state, H, x, x, x, mask, **wrong)
    found = locate(state, H, x, x, x, mask, out, weights, atol=1e-5)
    if phrases is None:
        assert found is None
    else:
        assert found is not None and all(p in found for p in phrases), found


def test_values_from_the_key():
    rng = np.random.default_rng(8)
    state = mha_state(rng, D)
    q, k, v = tensor(rng, 2, 3, D), tensor(rng, 2, 6, D), tensor(rng, 2, 6, D)
    with torch.no_grad():
        out, weights = attention(state, H, q, k, v, None, v_from=k)
    found = locate(state, H, q, k, v, None, out, weights, atol=1e-5)
    assert found.startswith(FOUND + " the projections") and "applied to the key" in found


def test_blank_rows_left_nan():
    rng = np.random.default_rng(9)
    state = mha_state(rng, D)
    x = tensor(rng, 2, 5, D)
    mask = torch.from_numpy(key_mask(rng, 2, 5, 5, blank_rows=1))
    with torch.no_grad():
        out, weights = attention(state, H, x, x, x, mask, keep_nan=True)
    found = locate(state, H, x, x, x, mask, out, weights, atol=1e-5)
    assert found.startswith(FOUND + " the weights") and "NaN" in found


def test_hidden_tests_get_no_numbers():
    rng = np.random.default_rng(7)
    state = mha_state(rng, D)
    x = tensor(rng, 2, 5, D)
    with torch.no_grad():
        out, weights = attention(state, H, x, x, x, None, scale=1.0)
    visible = locate(state, H, x, x, x, None, out, weights, atol=1e-5)
    with hidden_context(True):
        hidden = locate(state, H, x, x, x, None, out, weights, atol=1e-5)
    assert "about 2 times" in visible
    assert "another scale" in hidden and not any(c.isdigit() for c in hidden.split(":", 1)[1])
