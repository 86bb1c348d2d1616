"""The example class (examples/submissions), graded end to end, with every score pinned.

Each learner folder is graded once per module by the real command, `python -m autograder grade`
(visible and hidden graders; kofi, whose feed-forward hangs, on the visible ones), with a short
per-test time limit, in three parallel groups; the tests read the results.json each run writes
(about two minutes of CPU in all). For every learner they pin:

* each component's score, as the fraction of its weight that passed (see `points rule` in
  docs/architecture.md), and the exact total;
* for each component that loses points, that its failing messages name the planted mistake
  (a key phrase of the grader's sentence), so that a learner reading the report can fix it;
  for a catalogued mistake, every failing message of that component names it, hidden ones too.

The planted mistakes are listed in examples/submissions/README.md. A change to the graders that
moves a score or drops a sentence shows up here first; update the pins only when the new score
is the one a learner should get.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import pytest

from autograder.config import load_course

ROOT = Path(__file__).resolve().parents[2]
COURSE = ROOT / "course.toml"
CLASS = ROOT / "examples" / "submissions"

# Seconds of learner code per test: the examples need milliseconds; the hanging one pays the
# limit, plus a fresh worker, once per test that calls its feed-forward.
TEST_TIMEOUT = "2"
# One `autograder grade` process per group, side by side (about 10 s of CPU per learner with
# the hidden graders). kofi is graded on the visible graders only: with the hidden ones, 19 of
# its tests time out and restart the worker, over a minute of CPU to show the same behaviour.
GROUPS = (
    (("amara", "ben", "dara", "farah", "hana", "jun"), ()),
    (("chidi", "elif", "gus", "ivan", "lena"), ()),
    (("kofi",), ("--visible-only",)),
)
VISIBLE_ONLY = {n for names, flags in GROUPS if "--visible-only" in flags for n in names}
RUN_LIMIT = 600  # seconds; a group that takes this long is a failure, not a slow pass

NOT_IMPLEMENTED = "is not implemented yet"
FORBIDDEN = "torch.nn.MultiheadAttention is a library implementation of it"
# Both time-out sentences: "did not finish within 2 s of computing (the time limit per test,
# ...)" and, once a function has run out of time in two tests, "was not run again: it already
# ran past the time limit (2 s) in 2 earlier tests".
TIMED_OUT = "the time limit"


@dataclass(frozen=True)
class Expected:
    """One learner's grade: the share of each component's weight that passes (1 unless listed)
    and, for each component that loses points, phrases its failing messages must contain."""

    passed: dict[str, Fraction] = field(default_factory=dict)
    phrases: dict[str, tuple[str, ...]] = field(default_factory=dict)


HANGS = ("feed_forward",)  # the encoder runs stand-ins, never the learner's sublayers
EVERYTHING = ("softmax", "attention", "multi_head_attention", "feed_forward", "add_norm", "encoder")

EXPECTED = {
    # Correct, in a style unlike the reference (einsum, _split_heads, masked_fill).
    "amara": Expected(),
    # The untouched stubs.
    "ben": Expected(
        passed={name: Fraction(0) for name in EVERYTHING},
        phrases={name: (NOT_IMPLEMENTED,) for name in EVERYTHING},
    ),
    # Softmax and attention done, the rest still stubs.
    "chidi": Expected(
        passed={name: Fraction(0) for name in EVERYTHING[2:]},
        phrases={name: (NOT_IMPLEMENTED,) for name in EVERYTHING[2:]},
    ),
    # softmax(scores, axis=-2) inside scaled_dot_product_attention.
    "dara": Expected(
        passed={"attention": Fraction(19, 43)},
        phrases={"attention": ("[attention/softmax-over-queries]", "query axis (-2)")},
    ),
    # No 1/sqrt(d_k) in the NumPy attention.
    "elif": Expected(
        passed={"attention": Fraction(21, 43)},
        phrases={"attention": ("[attention/no-scale]", "sqrt(d_k)")},
    ),
    # sqrt(d_model) instead of sqrt(d_k) in every head of MultiHeadAttention.
    "farah": Expected(
        passed={"multi_head_attention": Fraction(11, 39)},
        phrases={
            "multi_head_attention": ("[multi_head_attention/scale-by-d-model]", "sqrt(d_model)")
        },
    ),
    # Q @ K.T on batched arrays.
    "gus": Expected(
        passed={"attention": Fraction(31, 43)},
        phrases={"attention": ("[attention/k-transposed-all-axes]", "K.T")},
    ),
    # Heads split with view(B, h, L, d_k), no transpose.
    "hana": Expected(
        passed={"multi_head_attention": Fraction(9, 39)},
        phrases={"multi_head_attention": ("[multi_head_attention/split-without-transpose]",)},
    ),
    # The second Add & Norm adds x instead of x2.
    "ivan": Expected(
        passed={"encoder": Fraction(15, 24)},
        phrases={"encoder": ("[encoder/second-residual-from-input]",)},
    ),
    # One EncoderLayer object reused num_layers times.
    "jun": Expected(
        passed={"encoder": Fraction(22, 24)},
        phrases={"encoder": ("[encoder/shared-layer]",)},
    ),
    # An infinite loop in PositionwiseFeedForward.forward. The encoder keeps its points: its
    # wiring is graded with known-good stand-ins for the sublayers (support/standins.py).
    "kofi": Expected(
        passed={"feed_forward": Fraction(1, 11)},
        phrases={"feed_forward": (TIMED_OUT, "PositionwiseFeedForward.forward")},
    ),
    # nn.MultiheadAttention inside MultiHeadAttention: that component scores zero, nothing else.
    "lena": Expected(
        passed={"multi_head_attention": Fraction(0)},
        phrases={"multi_head_attention": (FORBIDDEN,)},
    ),
}


@pytest.fixture(scope="module")
def course():
    return load_course(COURSE)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """{learner: results.json document}, every example graded once for this module."""
    out = tmp_path_factory.mktemp("example_grades")

    def run(group: tuple[tuple[str, ...], tuple[str, ...]]) -> subprocess.CompletedProcess:
        names, flags = group
        # One submission's reports go straight into --out; several get a folder each.
        folder = out / names[0] if len(names) == 1 else out
        return subprocess.run(
            [sys.executable, "-m", "autograder", "grade", *(str(CLASS / n) for n in names)]
            + ["--out", str(folder), "--course", str(COURSE), "--timeout", TEST_TIMEOUT, "--quiet"]
            + list(flags),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=RUN_LIMIT,
        )

    with ThreadPoolExecutor(max_workers=len(GROUPS)) as pool:
        runs = list(pool.map(run, GROUPS))
    for group, completed in zip(GROUPS, runs, strict=True):
        # 1 = graded, some test failed; 0 or 2 would mean a group graded perfectly or not at all.
        assert completed.returncode == 1, (group, completed.returncode, completed.stderr)
    return {
        name: json.loads((out / name / "results.json").read_text(encoding="utf-8"))
        for names, _ in GROUPS
        for name in names
    }


def component_scores(document) -> dict[str, float]:
    scores: dict[str, float] = {}
    for test in document["tests"]:
        (component,) = test["tags"]
        scores[component] = scores.get(component, 0.0) + test["score"]
    return scores


def failures(document, component: str) -> list[str]:
    own = [t for t in document["tests"] if t["tags"] == [component]]
    return [t["output"] for t in own if t["status"] != "passed"]


def expected_points(course, learner: str) -> dict[str, Fraction]:
    passed = EXPECTED[learner].passed
    return {c.name: c.points * passed.get(c.name, Fraction(1)) for c in course.components}


def test_every_example_folder_is_pinned_and_graded():
    folders = {p.name for p in CLASS.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}
    assert folders == set(EXPECTED)
    assert sorted(n for names, _ in GROUPS for n in names) == sorted(EXPECTED)


@pytest.mark.parametrize("learner", sorted(EXPECTED))
def test_component_scores_and_total(graded, course, learner):
    document = graded[learner]
    points = expected_points(course, learner)
    assert component_scores(document) == pytest.approx({k: float(v) for k, v in points.items()})
    total = sum(points.values(), Fraction(0))
    assert document["score"] == pytest.approx(float(total), abs=1e-9)
    assert document["max_score"] == 100
    # to the cent, a half up: ivan's exact 90.625 reads 90.63 (Python's format says 90.62)
    cents = math.floor(Fraction(total) * 100 + Fraction(1, 2))
    assert (
        document["output"].splitlines()[0] == f"Total: {cents // 100}.{cents % 100:02d} / 100.00."
    )
    assert document["extra_data"]["hidden_included"] is (learner not in VISIBLE_ONLY)


def test_the_correct_example_scores_full_marks(graded):
    document = graded["amara"]
    assert document["score"] == 100
    assert all(t["status"] == "passed" for t in document["tests"])
    assert document["extra_data"]["forbidden"] == []
    assert document["extra_data"]["grader_errors"] == []


def test_the_stubs_score_zero_with_a_not_implemented_sentence_per_component(graded, course):
    document = graded["ben"]
    assert document["score"] == 0
    for component in course.components:
        own = [t for t in document["tests"] if t["tags"] == [component.name]]
        assert own and all(t["status"] == "failed" for t in own), component.name
        file = f"{course.course.package_dir}/{component.module}.py"  # as the repository has it
        for test in own:
            message = test["output"]
            assert NOT_IMPLEMENTED in message, message
            # A visible test names the line; a hidden one the file alone (no worker-made text).
            at = f" at {file}:" if test["visibility"] == "visible" else f" at {file}. "
            assert at in message, message
            # A stub runs no part: nothing else to fix first, nothing about stand-ins.
            assert "could not be constructed" not in message, message
            assert "first:" not in message, message


MISTAKES = sorted(
    (learner, component) for learner, expected in EXPECTED.items() for component in expected.phrases
)


@pytest.mark.parametrize("learner, component", MISTAKES)
def test_failing_messages_name_the_mistake(graded, learner, component):
    """Each key phrase of the mistake's sentence appears in some failing test's message."""
    messages = failures(graded[learner], component)
    assert messages, f"{learner}'s {component} has no failing test"
    for phrase in EXPECTED[learner].phrases[component]:
        assert any(phrase in m for m in messages), (phrase, messages)


# The planted mistakes that are catalogued: their first phrase is the full id,
# "[<component>/<slug>]" (the stubs, the forbidden call and the hang have sentences of their own).
CATALOGUED = [(lr, c) for lr, c in MISTAKES if EXPECTED[lr].phrases[c][0].startswith("[")]


@pytest.mark.parametrize("learner, component", CATALOGUED)
def test_every_failing_message_names_the_planted_mistake(graded, learner, component):
    """A hidden test shows none of its inputs, so its message is all a learner gets: every
    failing test of the component, visible or hidden, names the one mistake planted there."""
    full_id = EXPECTED[learner].phrases[component][0]
    own = [t for t in graded[learner]["tests"] if t["tags"] == [component]]
    unnamed = [t["name"] for t in own if t["status"] != "passed" and full_id not in t["output"]]
    assert not unnamed, (full_id, unnamed)


@pytest.mark.parametrize("learner, component", MISTAKES)
def test_the_summary_names_the_mistake_first(graded, course, learner, component):
    """The one-line "first problem" of the component in the summary names the mistake."""
    title = next(c.title for c in course.components if c.name == component)
    (line,) = [
        line for line in graded[learner]["output"].splitlines() if line.startswith(f"{title}: ")
    ]
    assert any(phrase in line for phrase in EXPECTED[learner].phrases[component]), line


def test_output_beside_the_stand_ins_says_plainly_why_it_is_not_shown(graded):
    """jun's encoder tests ran beside the course's stand-ins, so what his code printed there is
    withheld; the sentence said so in the grader's words ("it ran beside the course's
    known-good modules, which the grader keeps to itself") and not what he could do."""
    withheld = (
        "(Not shown: in this test your code ran together with the course's own versions of the "
        "parts it builds on, which are kept private, so nothing printed during it is shown. To "
        "see what your code prints, run the tests in your own repository (pytest, or autograder "
        "grade .): there they use your own parts and show everything your code prints.)"
    )
    encoder = [t["output"] for t in graded["jun"]["tests"] if t["tags"] == ["encoder"]]
    assert any(withheld in output for output in encoder)


def test_lena_is_zeroed_only_where_the_forbidden_call_is_made(graded):
    """The encoder imports lena's MultiHeadAttention, but only multi_head_attention.py makes the
    call, so only that component is zeroed, and the record names her file and line: the one
    where she builds nn.MultiheadAttention, not the one where she calls it (whose forward calls
    F.multi_head_attention_forward: torch's call, not hers)."""
    uses = graded["lena"]["extra_data"]["forbidden"]
    assert [(u["api"], u["file"], u["line"], u["component"]) for u in uses] == [
        ("torch.nn.MultiheadAttention", "multi_head_attention.py", 25, "multi_head_attention")
    ]
    # Her sentence names the file as her repository does, so she can open it.
    assert uses[0]["sentence"].endswith(" in assignments/t101/multi_head_attention.py at line 25.")
    for test in graded["lena"]["tests"]:
        if test["tags"] == ["multi_head_attention"]:
            assert test["score"] == 0 and FORBIDDEN in test["output"]


def test_a_hanging_feed_forward_costs_only_the_tests_that_call_it(graded):
    """kofi's worker is killed on each time-out and restarted, so the other five components
    are graded normally and the feed-forward's parameter test still passes."""
    document = graded["kofi"]
    timed_out = [t for t in document["tests"] if TIMED_OUT in t["output"]]
    assert timed_out and {t["tags"][0] for t in timed_out} == set(HANGS)
    assert all(t["status"] == "failed" and t["score"] == 0 for t in timed_out)
    own = [t["output"] for t in timed_out if t["tags"] == ["feed_forward"]]
    assert own and all(m.startswith("PositionwiseFeedForward.forward(...)") for m in own)
    assert document["extra_data"]["grader_errors"] == []
