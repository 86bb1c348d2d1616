"""Points are shown and exported to the cent with a half rounded up, everywhere."""

from __future__ import annotations

import pytest

from autograder.gradebook import store
from autograder.points_text import lost_points, points
from autograder.results import points as results_points


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (90.625, "90.63"),  # Python's format gives 90.62: the binary value is exact, half to even
        (15.625, "15.63"),
        (2.675, "2.68"),  # its binary value is below 2.675: format gives 2.67
        (7.5, "7.50"),
        (100, "100.00"),
        (0.0, "0.00"),
        (1e-5, "0.00"),
        (18.333333333333332, "18.33"),
    ],
)
def test_points_round_a_half_up(value, shown):
    assert points(value) == shown
    assert results_points(value) == shown


def test_the_gradebook_writes_totals_as_the_reports_show_them(tmp_path):
    """ivan's 90.625 read 90.62 in gradebook.csv and the LMS export, 90.63 in a spreadsheet."""
    record = store.LearnerRecord("ivan", components={"encoder": 15.625}, total=90.625)
    staged = tmp_path / "staged"
    staged.mkdir()
    store.commit_learner(tmp_path, staged, record)
    store.write_gradebook(tmp_path, ["encoder"])
    text = (tmp_path / store.GRADEBOOK_FILE).read_text(encoding="utf-8")
    assert ",15.63," in text and ",90.63," in text


@pytest.mark.parametrize(
    ("score", "maximum", "lost"),
    [
        (15.625, 25.0, "9.37"),  # ivan: 25.00 - 15.63 on screen; the exact 9.375 rounds to 9.38
        (8.84375, 20.0, "11.16"),
        (0.0, 10.0, "10.00"),
        (2.5, 15.0, "12.50"),
    ],
)
def test_points_lost_are_the_difference_of_the_numbers_shown(score, maximum, lost):
    assert lost_points(score, maximum) == lost
    assert float(points(maximum)) - float(points(score)) == pytest.approx(float(lost))
