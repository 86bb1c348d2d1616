"""Real-world implementations as check cases: whole files and single definitions taken from a
course file (`source`, `only`), mutants with several mistakes, a name, a provenance and a
predicted score, and how `autograder check` judges them (on made-up outcomes)."""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.config import load_course
from autograder.mistakes import verdicts
from autograder.mistakes.cases import Case, plan_cases
from autograder.mistakes.catalogue import course_catalogue
from autograder.mistakes.edits import NO_DEFINITION, SOURCE_MISSING, MutantError
from autograder.mistakes.mutants import load_mutants, write_mutant
from autograder.mistakes.variants import load_variants, write_variant
from autograder.mistakes.verdicts import Outcome, judge

TOY = Path(__file__).parent / "toy_course"
ADDS = "[scale/adds-factor] Your scale adds the factor to every entry."
INFINITY = "[scale/accepts-infinity] An infinite factor must raise ValueError."
PROVENANCE = 'origin = "https://example.org/x"\nlicence = "MIT"\nchanges = "renamed x"\n'
REAL_SCALE = '''"""Scaling, as some tutorial writes it."""

import numpy as np


def scale(x, factor):
    return np.add(x, factor)
'''


@pytest.fixture
def course(tmp_path):
    """A copy of the toy course whose mutants and variants files the test writes."""
    import shutil

    root = tmp_path / "course"
    shutil.copytree(TOY, root, ignore=shutil.ignore_patterns("__pycache__"))
    for folder in ("solution/mutants", "solution/variants"):
        for path in (root / folder).glob("*.toml"):
            path.unlink()
    (root / "solution/corpus").mkdir()
    (root / "solution/corpus/scale.py").write_text(REAL_SCALE, encoding="utf-8")
    return root


def write_entries(course: Path, kind: str, text: str) -> None:
    (course / f"solution/{kind}s/scale.toml").write_text(text, encoding="utf-8")


def test_a_whole_file_mutant_with_two_mistakes_replaces_the_module(course, tmp_path):
    write_entries(
        course,
        "mutant",
        '[[mutants]]\nname = "tutorial"\nmistakes = ["adds-factor", "accepts-infinity"]\n'
        f'source = "../corpus/scale.py"\nscore = 2.5\n{PROVENANCE}',
    )
    config = load_course(course / "course.toml")
    (mutant,) = load_mutants(config.course.mutants, config, course_catalogue(config))
    assert mutant.mistakes == ("scale/adds-factor", "scale/accepts-infinity")
    assert (mutant.label, mutant.score, mutant.provenance.licence) == ("scale/tutorial", 2.5, "MIT")
    dest = write_mutant(mutant, config.course.reference_dir, tmp_path / "planted")
    assert (dest / "scale.py").read_text() == REAL_SCALE
    case = next(c for c in plan_cases(config).cases if c.kind == "mutant")
    assert (case.key, case.label, case.mistakes) == (
        "mutant.scale.tutorial",
        "scale/tutorial",
        ("scale/adds-factor", "scale/accepts-infinity"),
    )


def test_a_variant_may_take_one_definition_and_its_imports_from_a_source(course, tmp_path):
    source = course / "solution/corpus/scale.py"
    source.write_text(
        "import math\nfrom numpy import multiply\n\n\ndef scale(x, factor):\n"
        "    if not math.isfinite(factor):\n        raise ValueError(f'bad {factor}')\n"
        "    return multiply(x, factor)\n",
        encoding="utf-8",
    )
    write_entries(
        course,
        "variant",
        f'[[variants]]\nname = "tutorial"\nsource = "../corpus/scale.py"\nonly = ["scale"]\n'
        f"{PROVENANCE}",
    )
    config = load_course(course / "course.toml")
    (variant,) = load_variants(config.course.variants, config)
    dest = write_variant(variant, config.course.reference_dir, tmp_path / "written")
    text = (dest / "scale.py").read_text()
    assert "from numpy import multiply\n" in text and "return multiply(x, factor)" in text
    assert text.startswith('"""Scaling an array by a number (reference)."""')
    assert text.count("def scale(") == 1 and text.count("import math") == 1


def test_a_definition_the_module_lacks_is_refused_with_a_sentence(course, tmp_path):
    write_entries(
        course,
        "variant",
        '[[variants]]\nname = "tutorial"\nsource = "../corpus/scale.py"\nonly = ["rescale"]\n',
    )
    config = load_course(course / "course.toml")
    (variant,) = load_variants(config.course.variants, config)
    with pytest.raises(MutantError) as caught:
        write_variant(variant, config.course.reference_dir, tmp_path / "written")
    assert str(caught.value) == NO_DEFINITION.format(
        what="variant scale/tutorial", name="rescale", file="scale.py", where="scale.py"
    )


@pytest.mark.parametrize("source", ["../../../outside.py", "../corpus/missing.py"])
def test_a_source_outside_the_course_or_missing_is_refused(course, tmp_path, source):
    (course.parent / "outside.py").write_text("x = 1\n", encoding="utf-8")
    write_entries(course, "variant", f'[[variants]]\nname = "tutorial"\nsource = "{source}"\n')
    config = load_course(course / "course.toml")
    with pytest.raises(MutantError) as caught:
        load_variants(config.course.variants, config)
    assert str(caught.value) == SOURCE_MISSING.format(
        what="variant scale/tutorial", source=source, root=config.root
    )
    assert str(caught.value).endswith("expected a path relative to the TOML file that names it.")


def test_origin_licence_and_changes_go_together(course):
    write_entries(
        course,
        "variant",
        '[[variants]]\nname = "tutorial"\nsource = "../corpus/scale.py"\nlicence = "MIT"\n',
    )
    config = load_course(course / "course.toml")
    with pytest.raises(MutantError) as caught:
        load_variants(config.course.variants, config)
    assert "origin, licence and changes go together" in str(caught.value)


def _real_world(score: float | None = None) -> Case:
    return Case(
        key="mutant.scale.tutorial",
        kind="mutant",
        label="scale/tutorial",
        component="scale",
        mistakes=("scale/adds-factor", "scale/accepts-infinity"),
        score=score,
    )


def _plan():
    return plan_cases(load_course(TOY / "course.toml"))


def test_each_failing_test_names_one_of_its_mistakes_and_each_is_named(tmp_path):
    outcome = Outcome(
        scores={"scale": 2.5, "normalize": 5.0},
        failures={"scale": [("a", f"Known mistake: {ADDS}"), ("b", INFINITY)]},
    )
    row = judge(_plan(), _real_world(score=2.5), outcome)
    assert (row.verdict, row.named, row.named_in, row.reasons) == ("ok", True, (2, 2), [])


def test_a_mistake_of_it_that_no_test_names_is_partly_named(tmp_path):
    outcome = Outcome(
        scores={"scale": 2.5, "normalize": 5.0},
        failures={"scale": [("a", ADDS), ("b", f"Known mistake: {ADDS}")]},
    )
    row = judge(_plan(), _real_world(), outcome)
    assert (row.verdict, row.named) == ("partly named", False)
    assert row.reasons == [
        "No failing test of scale names [scale/accepts-infinity], which this implementation "
        "also has: a learner with it is never told; find it in a failing check and pass its "
        "mistake() there."
    ]


def test_none_of_its_mistakes_named_says_which_were_expected(tmp_path):
    outcome = Outcome(scores={"scale": 2.5, "normalize": 5.0}, failures={"scale": [("a", "x.")]})
    row = judge(_plan(), _real_world(), outcome)
    assert (row.verdict, row.named) == ("not named", False)
    assert row.reasons == [
        "The graders catch this implementation but no failing test of scale names any of its "
        "mistakes, [scale/adds-factor], [scale/accepts-infinity]; pass mistake(...) to the "
        "checks that fail."
    ]


def test_a_score_other_than_predicted_fails_the_case(tmp_path):
    outcome = Outcome(
        scores={"scale": 5.0, "normalize": 5.0},
        failures={"scale": [("a", ADDS), ("b", INFINITY)]},
    )
    row = judge(_plan(), _real_world(score=2.5), outcome)
    assert (row.verdict, row.named) == (verdicts.SCORE_DIFFERS, True)
    assert row.reasons == [
        "Its notes predict 2.5 points in scale, but it scores 5: the graders charge its "
        "mistakes differently from what its entry says."
    ]


def test_a_score_is_compared_as_the_table_shows_it():
    """0.625 shows as 0.62, as the notes write it: no "predicts 0.62 but scores 0.62" (their
    difference is a hair over 0.005 in floating point)."""
    outcome = Outcome(
        scores={"scale": 0.625, "normalize": 5.0},
        failures={"scale": [("a", f"Known mistake: {ADDS}"), ("b", INFINITY)]},
    )
    assert judge(_plan(), _real_world(score=0.62), outcome).verdict == "ok"
    assert judge(_plan(), _real_world(score=0.63), outcome).verdict == verdicts.SCORE_DIFFERS
