"""Which pairs of learners stand out: judged against the class's own distribution.

The contract fixes every name and signature, so independent solutions of a small component
converge (two independent feed-forwards share most of their normalised tokens: 0.75 and more
in the example class), and a fixed cut alone would flag honest learners. Each component (and
the whole package, `all`) is judged against its own pairs: a pair is flagged when its
similarity is at least

    max(floor, median + max(SPREAD x IQR, MARGIN))

of that component's pairs: far above what the class's learners share anyway, and at least the
floor (FLOOR_WHOLE for the whole package, FLOOR_COMPONENT for one component, whose
distribution is noisier). With fewer than MIN_PAIRS pairs there is no distribution to judge
against: FIXED_CUT alone applies.

A component whose pairs' median is CONVERGED or more (in the example class: Add & Norm, the
feed-forward, the encoder, which the contract nearly dictates) tells copies from independent
work apart no better than chance: its pairs are flagged only when the same pair is flagged on
the whole package, to show where their code is shared.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, replace

FLOOR_WHOLE = 0.8
FLOOR_COMPONENT = 0.9
SPREAD = 1.5
MARGIN = 0.2
MIN_PAIRS = 10
FIXED_CUT = 0.9
CONVERGED = 0.5


@dataclass(frozen=True)
class Pair:
    """Two learners (a before b), a component ("all": the whole package), their similarity
    (0 to 1) and whether it stands out."""

    learner_a: str
    learner_b: str
    component: str
    similarity: float
    flagged: bool = False


def cut(similarities: list[float], floor: float) -> float:
    """The similarity from which a pair of this component is flagged."""
    if len(similarities) < MIN_PAIRS:
        return max(floor, FIXED_CUT)
    q1, median, q3 = statistics.quantiles(similarities, n=4, method="inclusive")
    return max(floor, median + max(SPREAD * (q3 - q1), MARGIN))


def converged(similarities: list[float]) -> bool:
    """Whether a component's independent solutions converge (median CONVERGED or more)."""
    return len(similarities) >= MIN_PAIRS and statistics.median(similarities) >= CONVERGED


def judge(pairs: list[Pair], whole: str) -> tuple[list[Pair], dict[str, float], list[str]]:
    """The pairs with ``flagged`` set, each component's cut and the converged components
    (``whole`` names the whole package's component)."""
    by_component: dict[str, list[Pair]] = {}
    for pair in pairs:
        by_component.setdefault(pair.component, []).append(pair)
    values = {c: [p.similarity for p in among] for c, among in by_component.items()}
    cuts = {c: cut(v, FLOOR_WHOLE if c == whole else FLOOR_COMPONENT) for c, v in values.items()}
    together = {
        (p.learner_a, p.learner_b)
        for p in by_component.get(whole, [])
        if p.similarity >= cuts[whole]
    }
    alike = [c for c in by_component if c != whole and converged(values[c])]
    judged = [
        replace(
            p,
            flagged=p.similarity >= cuts[p.component]
            and (p.component not in alike or (p.learner_a, p.learner_b) in together),
        )
        for p in pairs
    ]
    return judged, cuts, alike
