"""support.mha_packed names a per-head split of a packed [Q | K | V] projection, and the error
that packing query, key and value raises in cross-attention.

The packed attention is written here in torch, as a tutorial's fused qkv_proj is, and run in
this process. Symbols: B batch, L queries, S keys, d_model width, h heads, d_k = d_model // h.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.feedback import GradingFailure
from autograder.runtime.shared.errors import LearnerError
from tests.graders.support.divergence import locate
from tests.graders.support.inputs import key_mask, mha_state, tensor
from tests.graders.support.mha_packed import packed_mistakes, packing_hint

D, H = 16, 4
SLUG = "[multi_head_attention/qkv-split-per-head]"
BLANK_SLUG = "[multi_head_attention/fully-masked-query]"


def packed_attention(state, x, mask=None, fill=float("-inf")):
    """A fused projection of x, reshaped to (B, T, h, 3 * d_k) and chunked into q, k, v."""

    def project(name):
        return F.linear(x, state[f"{name}.weight"], state[f"{name}.bias"])

    B, T, _ = x.shape
    qkv = torch.cat([project("W_q"), project("W_k"), project("W_v")], dim=-1)
    q, k, v = qkv.view(B, T, H, 3 * D // H).transpose(1, 2).chunk(3, dim=-1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(D // H)
    if mask is not None:
        scores = scores.masked_fill(~mask.unsqueeze(1), fill)
    weights = torch.softmax(scores, dim=-1)
    heads = (weights @ v).transpose(1, 2).reshape(B, T, D)
    return project_out(state, heads), weights


def project_out(state, concat):
    return F.linear(concat, state["W_o.weight"], state["W_o.bias"])


def test_names_the_per_head_split():
    rng = np.random.default_rng(3)
    state, x = mha_state(rng, D), tensor(rng, 2, 5, D)
    with torch.no_grad():
        out, weights = packed_attention(state, x)
    outputs, all_weights = packed_mistakes(state, H, x, x, x, None)
    (sentence,) = all_weights
    assert SLUG in sentence
    assert torch.allclose(all_weights[sentence].float(), weights, atol=1e-6)
    assert torch.allclose(outputs[sentence].float(), out, atol=1e-5)


def test_names_blank_rows_with_it():
    rng = np.random.default_rng(4)
    state, x = mha_state(rng, D), tensor(rng, 2, 5, D)
    mask = torch.from_numpy(key_mask(rng, 2, 5, 5, blank_rows=1))
    with torch.no_grad():
        _, weights = packed_attention(state, x, mask, fill=-9e15)
    _, all_weights = packed_mistakes(state, H, x, x, x, mask)
    both = next(s for s in all_weights if BLANK_SLUG in s)
    alone = next(s for s in all_weights if BLANK_SLUG not in s)
    assert all_weights[both].holds(weights.double().numpy())
    assert not torch.allclose(all_weights[alone].float(), weights, atol=1e-5)


def test_nothing_to_name_in_cross_attention_or_one_head():
    rng = np.random.default_rng(5)
    state, q, kv = mha_state(rng, D), tensor(rng, 2, 3, D), tensor(rng, 2, 6, D)
    assert packed_mistakes(state, H, q, kv, kv, None) == ({}, {})
    assert packed_mistakes(state, 1, kv, kv, kv, None) == ({}, {})


def test_locate_names_the_split():
    rng = np.random.default_rng(6)
    state, x = mha_state(rng, D), tensor(rng, 2, 5, D)
    with torch.no_grad():
        _, weights = packed_attention(state, x)
    found = locate(state, H, x, x, x, None, None, weights, atol=1e-5)
    assert found.startswith("First difference found at the projections") and SLUG in found


def _learner_error(message: str) -> LearnerError:
    feedback = f"MultiHeadAttention.forward(...) raised RuntimeError: {message}"
    return LearnerError("exception", feedback, exc_type="RuntimeError", message=message)


@pytest.mark.parametrize("how", ["cat", "stack"])
def test_packing_error_is_named(how):
    q, kv = torch.zeros(2, 3, D), torch.zeros(2, 6, D)
    join = torch.cat if how == "cat" else torch.stack
    with pytest.raises(RuntimeError) as raised:
        join([q, kv, kv], dim=-1)
    with pytest.raises(GradingFailure) as named, packing_hint(q, kv):
        raise _learner_error(str(raised.value))
    assert "[multi_head_attention/packed-cross-attention]" in named.value.message
    assert named.value.message.startswith("MultiHeadAttention.forward(...) raised RuntimeError")


def test_other_errors_pass_through():
    q, kv = torch.zeros(2, 3, D), torch.zeros(2, 6, D)
    with pytest.raises(RuntimeError) as raised:
        torch.cat([torch.zeros(2, 4, D), torch.zeros(2, 5, D)], dim=-1)  # not L and S
    error = _learner_error(str(raised.value))
    with pytest.raises(LearnerError), packing_hint(q, kv):
        raise error
    with pytest.raises(LearnerError), packing_hint(kv, kv):  # self-attention: no hint
        raise _learner_error("Sizes of tensors must match except in dimension 2.")
