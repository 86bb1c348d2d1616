"""The class report's figures, as PNG bytes.

The class report's figures (matplotlib, Agg backend): the totals' histogram and one histogram
per component, as PNG bytes; b"" when matplotlib is not installed (the `report` extra)."""

from __future__ import annotations

import io
import math
from typing import Any

PANELS_PER_ROW = 3
BLUE = "#4c72b0"


def figure_library() -> Any:
    """matplotlib's pyplot on the Agg backend (no display needed); None when it is missing.
    grade-class imports it in a thread while the learners are graded (half a second)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib import pyplot
    except ImportError:
        return None
    return pyplot


def _bins(points: float) -> list[float] | int:
    """Ten equal bins from 0 to the points (a learner with full marks in the last one)."""
    return [points * i / 10 for i in range(11)] if points > 0 else 10


def _png(pyplot: Any, figure: Any) -> bytes:
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})
    pyplot.close(figure)
    return buffer.getvalue()


def score_figure(totals: list[float], max_score: float) -> bytes:
    """A PNG histogram of the totals; b"" when matplotlib is missing."""
    pyplot = figure_library()
    if pyplot is None:
        return b""
    figure, axes = pyplot.subplots(figsize=(6, 3.2), dpi=100)
    axes.hist(totals, bins=_bins(max_score), color=BLUE, edgecolor="white")
    axes.set_xlabel(f"Total score (out of {max_score:g})")
    axes.set_ylabel("Learners")
    axes.set_title(f"Score distribution ({len(totals)} graded)")
    return _png(pyplot, figure)


def component_figure(scores: list[tuple[str, float, list[float]]]) -> bytes:
    """One PNG with a histogram per component (title, points, the learners' scores), in
    course order, PANELS_PER_ROW a row; b"" when matplotlib is missing or nothing is scored."""
    pyplot = figure_library()
    shown = [item for item in scores if item[2]]
    if pyplot is None or not shown:
        return b""
    rows = math.ceil(len(shown) / PANELS_PER_ROW)
    columns = min(PANELS_PER_ROW, len(shown))
    figure, grid = pyplot.subplots(
        rows, columns, figsize=(3.4 * columns, 2.6 * rows), dpi=100, squeeze=False
    )
    for axes, (title, points, values) in zip(grid.flat, shown, strict=False):
        axes.hist(values, bins=_bins(points), color=BLUE, edgecolor="white")
        axes.set_title(f"{title} ({len(values)})", fontsize=10)
        axes.set_xlabel(f"Score (out of {points:g})", fontsize=9)
        axes.set_ylabel("Learners", fontsize=9)
        axes.yaxis.get_major_locator().set_params(integer=True)
    for axes in list(grid.flat)[len(shown) :]:
        axes.set_visible(False)
    return _png(pyplot, figure)
