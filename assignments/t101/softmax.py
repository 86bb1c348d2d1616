"""Softmax: turn a slice of real scores into non-negative weights that sum to 1."""

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax of `x` along `axis`, computed in a numerically stable way.

    Computes, for every slice `x_1 .. x_n` taken along `axis`:

        softmax(x)_i = exp(x_i - m) / sum_j exp(x_j - m),    m = max_j x_j

    Subtracting the slice maximum `m` changes nothing mathematically (it cancels between the
    numerator and the denominator) but keeps `exp` from overflowing, so `[1000., 1001.]` gives
    `[0.2689, 0.7311]` rather than NaN.

    Shape:
        x: any shape (...), real values; `axis` may be negative, as in NumPy.
        returns: the same shape as `x`.

    Dtypes:
        A floating `x` keeps its dtype (float32 stays float32, float64 stays float64). An
        integer or boolean `x` gives float64.

    Special values:
        An entry equal to `-inf` gets weight exactly 0 (a masked position). A slice whose
        entries are all `-inf` returns all zeros: no NaN and no NumPy warning.

    Guarantees:
        Every slice along `axis` is non-negative and sums to 1 (except all-`-inf` slices, which
        are all 0). `x` itself is never modified.

    Source:
        Vaswani et al. 2017, "Attention Is All You Need", section 3.2.1 (the softmax over the
        keys); the PyTorch documentation page "torch.nn.functional.softmax"; SciPy's
        "scipy.special.softmax" computes the same values.
    """
    raise NotImplementedError(
        "Softmax: softmax(x, axis) is not implemented yet; write it in assignments/t101/softmax.py."
    )
