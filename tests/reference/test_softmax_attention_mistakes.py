"""The graders' softmax and attention mistake arrays (support.softmax_mistakes, support.mistakes)
name each mutant of solutions/mutants/{softmax,attention}.toml, and nothing else.

Every mutant is planted in a copy of the references and imported here, in-process (no worker), then
run on a fixed set of cases; a case whose result is wrong must be named with the mutant's own id
or with none, and at least one case must name it. The references match every case and no mistake.
A fast proof that the harness side of "diagnosis in feedback" computes what each mistake does;
`autograder check` proves the same end to end.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from autograder.config import load_course
from autograder.feedback import KNOWN_MISTAKES, GradingFailure, expect, expect_close
from autograder.mistakes import course_catalogue
from autograder.mistakes.mutants import load_mutants, write_mutant
from tests.graders.support.compare import expect_pair
from tests.graders.support.inputs import array, key_mask, padding_mask, tensor, to_numpy
from tests.graders.support.mistakes import sdpa, sdpa_mistakes
from tests.graders.support.softmax_charge import charged_to_softmax
from tests.graders.support.softmax_mistakes import (
    integer_output_sentence,
    softmax_mistakes,
    softmax_over,
)

ROOT = Path(__file__).resolve().parents[2]
COURSE = load_course(ROOT / "course.toml")
REFERENCE = ROOT / "solutions" / "t101"
ID = re.compile(r"\[((?:softmax|attention)/[a-z0-9-]+)\]")


#: Mistakes recognised from the error they raise (a hint the full graders add), which these
#: in-process checks do not call: `autograder check` proves those.
NAMED_FROM_ERRORS = {"attention/k-transpose-fixed-axes", "attention/no-shape-check"}


def _mutants(component: str):
    """The planted mutants of a component (one mistake each; the real-world ones, with several,
    are proved by `autograder check`)."""
    catalogue = course_catalogue(COURSE)
    return [
        m
        for m in load_mutants(COURSE.course.mutants, COURSE, catalogue)
        if m.component == component and not m.name and m.mistake not in NAMED_FROM_ERRORS
    ]


def _import(folder: Path, name: str):
    for loaded in [m for m in sys.modules if m == name or m.startswith(f"{name}.")]:
        del sys.modules[loaded]  # a package of this name imported before (another tmp_path)
    spec = importlib.util.spec_from_file_location(
        name, folder / "__init__.py", submodule_search_locations=[str(folder)]
    )
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    spec.loader.exec_module(package)
    return package


def _module(tmp_path: Path, module: str, mutant=None):
    """t101.<module> of the references, or of a copy with `mutant` planted, imported under a
    private package name."""
    if mutant is None:
        package = _import(REFERENCE, "t101_mistakes_reference")
    else:
        slug = mutant.mistake.replace("/", "_").replace("-", "_")
        folder = write_mutant(mutant, REFERENCE, tmp_path / slug / "t101")
        package = _import(folder, f"t101_mutant_{slug}")
    return importlib.import_module(f"{package.__name__}.{module}")


class _Ids(set):
    """The ids a failure names; `undecided`: named as mistakes its inputs cannot tell apart."""

    undecided = False


def _named(check) -> set[str] | None:
    """None when check() passes; else the ids its failure names (empty: wrong, not named).
    A learner exception counts as a failure that names nothing."""
    try:
        with np.errstate(all="ignore"):
            check()
    except GradingFailure as failure:
        ids = _Ids(ID.findall(failure.message))
        ids.undecided = failure.message.startswith(UNDECIDED)
        return ids
    except (ValueError, TypeError, RuntimeError):
        return set()
    return None


UNDECIDED = KNOWN_MISTAKES.split("{")[0]  # "Known mistakes in "


def _only(ids: set[str], wanted: str) -> bool:
    """ids name only `wanted`, or name it among mistakes the test's inputs cannot tell apart."""
    return ids <= {wanted} or (getattr(ids, "undecided", False) and wanted in ids)


# -- softmax ---------------------------------------------------------------------------------


def _softmax_cases(softmax):
    rng = np.random.default_rng(7)
    cases = []

    def close(x, axis):
        def check():
            got = softmax(x, axis=axis)
            mistakes = softmax_mistakes(x, axis, got)
            expect_close(got, softmax_over(x, axis), what="softmax", atol=1e-6, mistakes=mistakes)

        return check

    for axis in (0, 1, -1):
        cases.append(close(array(rng, 2, 3, 4), axis))
    cases.append(close(np.array([1000.0, 1001.0]), -1))
    cases.append(close(array(rng, 3, 5) + np.array([[1000.0], [0.0], [-1000.0]]), -1))
    cases.append(close((100.0 + array(rng, 4, 6, scale=10.0)).astype(np.float32), 0))
    blank = array(rng, 3, 4)
    blank[1] = -np.inf
    cases.append(close(blank, -1))

    def integers():
        x = np.array([[1, 2, 3], [0, 0, 0]])
        got = softmax(x)
        expect(
            np.issubdtype(got.dtype, np.floating),
            "softmax(x) returned an integer dtype." + integer_output_sentence(got, "softmax(x)"),
        )
        expect_close(got, softmax_over(x, -1), what="softmax(x)", atol=1e-7)

    cases.append(integers)
    return cases


def test_reference_softmax_matches_every_case(tmp_path):
    softmax = _module(tmp_path, "softmax").softmax
    assert [_named(case) for case in _softmax_cases(softmax)] == [None] * 8


@pytest.mark.parametrize("mutant", _mutants("softmax"), ids=lambda m: m.mistake)
def test_softmax_mutant_is_named(tmp_path, mutant):
    softmax = _module(tmp_path, "softmax", mutant).softmax
    named = [_named(case) for case in _softmax_cases(softmax)]
    failing = [ids for ids in named if ids is not None]
    assert any(mutant.mistake in ids for ids in failing), named
    assert all(_only(ids, mutant.mistake) for ids in failing), named


# -- attention -------------------------------------------------------------------------------


def _module_case(attention, rng):
    """A check of attention.SelfAttention against sdpa on its own projections."""

    def check():
        m = attention.SelfAttention(6, 4, 5)
        state = {
            "W_q.weight": tensor(rng, 4, 6),
            "W_k.weight": tensor(rng, 4, 6),
            "W_v.weight": tensor(rng, 5, 6),
        }
        m.load_state_dict(state)
        x, mask = tensor(rng, 2, 3, 6), torch.from_numpy(key_mask(rng, 2, 3, 3))
        Q, K, V = (to_numpy(x @ state[f"W_{p}.weight"].T) for p in "qkv")
        with torch.no_grad():
            got = m(x, mask)
        mistakes = sdpa_mistakes(Q, K, V, mask.numpy(), d_model=6, got=got)
        expect_pair(
            got,
            sdpa(Q, K, V, mask.numpy()),
            what="module",
            atol=1e-5,
            array_type=torch.Tensor,
            mistakes=mistakes,
        )

    return check


def _attention_cases(attention):
    rng = np.random.default_rng(11)
    cases = []

    def sdpa_case(Q, K, V, mask=None):
        def check():
            got = attention.scaled_dot_product_attention(Q, K, V, mask)
            expected = sdpa(Q, K, V, mask)
            mistakes = sdpa_mistakes(Q, K, V, mask, got=got)
            expect_pair(
                got, expected, what="sdpa", atol=1e-10, array_type=np.ndarray, mistakes=mistakes
            )

        return check

    cases.append(sdpa_case(array(rng, 3, 4), array(rng, 5, 4), array(rng, 5, 6)))
    cases.append(sdpa_case(array(rng, 4, 3, 4), array(rng, 4, 4, 4), array(rng, 4, 4, 2)))
    cases.append(
        sdpa_case(array(rng, 4, 5), array(rng, 6, 5), array(rng, 6, 3), key_mask(rng, 4, 6))
    )
    blank = key_mask(rng, 3, 5, blank_rows=1)
    cases.append(sdpa_case(array(rng, 3, 4), array(rng, 5, 4), array(rng, 5, 4), blank))

    def self_attention_case():
        X, W_q, W_k, W_v = array(rng, 4, 8), array(rng, 8, 2), array(rng, 8, 2), array(rng, 8, 3)
        mask = padding_mask(rng, length=4)
        Q, K, V = X @ W_q, X @ W_k, X @ W_v
        got = attention.self_attention(X, W_q, W_k, W_v, mask)
        mistakes = sdpa_mistakes(Q, K, V, mask, d_model=8, got=got)
        expect_pair(
            got,
            sdpa(Q, K, V, mask),
            what="self",
            atol=1e-10,
            array_type=np.ndarray,
            mistakes=mistakes,
        )

    cases.append(self_attention_case)

    cases.append(_module_case(attention, rng))
    return cases


def test_reference_attention_matches_every_case(tmp_path):
    attention = _module(tmp_path, "attention")
    assert [_named(case) for case in _attention_cases(attention)] == [None] * 6


@pytest.mark.parametrize("mutant", _mutants("attention"), ids=lambda m: m.mistake)
def test_attention_mutant_is_named(tmp_path, mutant):
    attention = _module(tmp_path, "attention", mutant)
    named = [_named(case) for case in _attention_cases(attention)]
    failing = [ids for ids in named if ids is not None]
    assert any(mutant.mistake in ids for ids in failing), named
    # two scale mistakes that give the same scale on a case's inputs are named together
    assert all(_only(ids, mutant.mistake) or _same_scale(ids, mutant.mistake) for ids in failing), (
        named
    )


def _same_scale(ids: set, mistake: str) -> bool:
    return mistake in ids and all(i.startswith("attention/scale-by-") for i in ids)


@pytest.mark.parametrize("fill", ["-5.0", "-10.0", "-30.0"])
def test_any_small_negative_fill_is_named(tmp_path, fill):
    """Not only -1: the fill is fitted to the learner's weights (-30 shows only on fully masked
    queries, which blank-row-uniform names)."""
    (mutant,) = [m for m in _mutants("attention") if m.mistake.endswith("small-negative")]
    edits = tuple(
        e.model_copy(update={"replace": e.replace.replace("-1.0", fill)}) for e in mutant.edits
    )
    attention = _module(tmp_path, "attention", mutant.model_copy(update={"edits": edits}))
    named = [_named(case) for case in _attention_cases(attention)]
    wanted = "attention/blank-row-uniform" if fill == "-30.0" else mutant.mistake
    assert any(wanted in ids for ids in named if ids is not None), named
    assert all(_only(ids, wanted) for ids in named if ids is not None), named


# -- a softmax NaN is charged once -----------------------------------------------------------


class _Learner:
    """Stands for the `learner` fixture: module("softmax").softmax is a local function."""

    def __init__(self, softmax):
        self._softmax = softmax

    def module(self, name):
        assert name == "softmax"
        return type("Module", (), {"softmax": staticmethod(self._softmax)})


def _nan_softmax(x, axis=-1):
    with np.errstate(invalid="ignore"):
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)


def test_blank_row_nan_is_left_to_a_softmax_that_makes_it():
    rng = np.random.default_rng(5)
    Q, K, V = array(rng, 3, 4), array(rng, 5, 4), array(rng, 5, 4)
    mask = key_mask(rng, 3, 5, blank_rows=1)
    out, weights = sdpa(Q, K, V, mask)
    nan_pair = (
        np.where(mask.any(-1, keepdims=True), out, np.nan),
        np.where(mask.any(-1, keepdims=True), weights, np.nan),
    )
    assert charged_to_softmax(_Learner(_nan_softmax), nan_pair, Q, K, V, mask, atol=1e-10)
    # The learner's own softmax is right: the NaN is the attention's.
    assert not charged_to_softmax(
        _Learner(lambda x, axis=-1: softmax_over(x, axis)), nan_pair, Q, K, V, mask, atol=1e-10
    )
    # Any other wrong result, or no fully masked query: not the softmax's.
    assert not charged_to_softmax(
        _Learner(_nan_softmax), (out * 2, weights), Q, K, V, mask, atol=1e-10
    )
    assert not charged_to_softmax(_Learner(_nan_softmax), nan_pair, Q, K, V, None, atol=1e-10)
