"""A LayerNorm of the learner's own is told by its parameters' names, TensorFlow's too: an
attention or a feed-forward with `ln.gamma`/`ln.beta` (Kyubyong/transformer's ln, in the corpus)
is named add-norm-inside as one with `layer_norm.weight` is, and an AddNorm whose norm creates
beta before gamma gets the seeded weight in gamma, not in beta (before, the first (d_model,)
parameter was always taken as the weight, so every numeric test failed with no mistake named)."""

from __future__ import annotations

import pytest

from tests.graders.support import ffn_mistakes, mha_checks
from tests.graders.support.catalogue import mistake
from tests.graders.support.params import is_norm_parameter, scale_then_shift


@pytest.mark.parametrize(
    "name", ["layer_norm.weight", "norm.bias", "ln.gamma", "ln.beta", "ln_1.weight", "a_2", "b_2"]
)
def test_a_layer_norms_parameters_are_told_by_name(name):
    assert is_norm_parameter(name)


@pytest.mark.parametrize("name", ["W_q.weight", "W_o.bias", "W_1.weight", "scale", "linear.bias"])
def test_other_parameters_are_not(name):
    assert not is_norm_parameter(name)


@pytest.mark.parametrize(
    "names, ordered",
    [
        (["ln.beta", "ln.gamma"], ["ln.gamma", "ln.beta"]),  # TensorFlow's order of creation
        (["ln.gamma", "ln.beta"], ["ln.gamma", "ln.beta"]),
        (["norm.bias", "norm.weight"], ["norm.weight", "norm.bias"]),
        (["norm.a_2", "norm.b_2"], ["norm.a_2", "norm.b_2"]),
        (["norm.first", "norm.second"], ["norm.first", "norm.second"]),  # no names: the order
    ],
)
def test_scale_then_shift(names, ordered):
    assert scale_then_shift(names) == ordered


def test_gamma_and_beta_inside_attention_and_feed_forward_are_add_norm_inside():
    d = 4
    mha_wanted = [
        (f"W_{n}.{p}", (d, d) if p == "weight" else (d,))
        for n in "qkvo"
        for p in ("weight", "bias")
    ]
    ln = [("ln.beta", (d,)), ("ln.gamma", (d,))]
    assert mistake(mha_checks.ADD_NORM_INSIDE) in mha_checks.parameter_mistakes(
        mha_wanted + ln, mha_wanted
    )
    ffn_wanted = [
        ("W_1.weight", (8, d)),
        ("W_1.bias", (8,)),
        ("W_2.weight", (d, 8)),
        ("W_2.bias", (d,)),
    ]
    assert ffn_mistakes.parameter_mistakes(ffn_wanted + ln, ffn_wanted) == [
        mistake(ffn_mistakes.ADD_NORM_INSIDE)
    ]
