"""Points as every report, gradebook and export writes them: two decimals, a half rounded up.

Scores are exact fractions until they are shown (results/points_rule.py). Python's own format
rounds a float's binary value half to even, so 90.625 would read 90.62 in one place and a
person's 90.63 in their spreadsheet; this is the one rounding every output uses. Points lost
are the difference of the two numbers shown (lost_points), not the exact loss rounded: 25 less
15.625 reads 15.63 with 9.37 lost, as a learner subtracts it, not 9.38.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

#: Points are shown to the cent.
CENT = Decimal("0.01")


def points(value: float) -> str:
    """``value`` to the cent as text, a half rounded up: 90.625 -> "90.63", 7.5 -> "7.50"."""
    return str(Decimal(repr(float(value))).quantize(CENT, rounding=ROUND_HALF_UP))


def lost_points(score: float, maximum: float) -> str:
    """The points lost as the shown numbers give them: points(maximum) less points(score), so
    that 15.625 of 25 loses "9.37" (rounding the exact 9.375 would show 9.38)."""
    return str(Decimal(points(maximum)) - Decimal(points(score)))
