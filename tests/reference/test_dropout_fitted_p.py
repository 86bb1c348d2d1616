"""support.dropout.fitted_p reads the probability a dropout used from what it kept: a dropout
fixed in the class (bkoch4142's 0.1, in the corpus) is told from the one given, and named
dropout-p-ignored, instead of "apply self.dropout once ... and nowhere else"."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from tests.graders.support.dropout import fitted_p


@pytest.mark.parametrize("p", [0.1, 0.25, 0.5])
def test_the_probability_used_is_read_back(p):
    torch.manual_seed(0)
    base = torch.rand(4, 6, 8) + 0.5
    got = F.dropout(base, p, training=True)
    assert fitted_p(got, torch.zeros(()), base, atol=1e-6) == pytest.approx(p, abs=1e-6)


def test_a_bias_is_what_a_dropped_element_keeps():
    torch.manual_seed(1)
    bias, hidden = torch.full((8,), 0.5), torch.rand(4, 6, 8) + 0.1
    got = bias + F.dropout(hidden, 0.1, training=True)
    assert fitted_p(got, bias, bias + hidden, atol=1e-5) == pytest.approx(0.1, abs=1e-5)


def test_no_probability_fits_other_changes():
    base = torch.rand(4, 6) + 0.5
    zero = torch.zeros(())
    assert fitted_p(base, zero, base, atol=1e-6) is None  # nothing dropped
    assert fitted_p(0.5 * base, zero, base, atol=1e-6) is None  # scaled down
    assert fitted_p(base + torch.rand(4, 6), zero, base, atol=1e-6) is None  # noise
