"""autograder.expected: a decorated function is computed once per distinct arguments, hits are
independent copies, impure functions and non-values are never stored, and entries written to a
folder by one process are read by another (the batch's children and their session)."""

from __future__ import annotations

import os
import pickle
import random
from pathlib import Path

import numpy as np
import pytest
import torch

from autograder import expected
from autograder.expected import ExpectedValueImpure, expected_value
from autograder.feedback import AnyOf
from autograder.runtime.shared import wire

calls: list[tuple] = []


@expected_value
def scaled(x, factor=2.0, *, shift=None):
    calls.append(("scaled", factor))
    out = {"out": x * factor, "both": (x, AnyOf(x + 1, x - 1))}
    if shift is not None:
        out["shifted"] = x + shift
    return out


@expected_value
def noisy_torch(x):
    calls.append(("noisy_torch",))
    return x + torch.rand(x.shape, dtype=x.dtype)


@expected_value
def noisy_numpy(x):
    calls.append(("noisy_numpy",))
    return x + np.random.normal(size=x.shape)


@expected_value
def rng_neutral(x):
    """Draws inside fork_rng: the global generator is left as it was, so it may be stored."""
    calls.append(("rng_neutral",))
    with torch.random.fork_rng(devices=[]):
        torch.rand(3)
    return x * 3


@expected_value
def anything(value):
    calls.append(("anything",))
    return value


@expected_value
def failing(x):
    calls.append(("failing",))
    raise ValueError("no")


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.delenv(expected.DISABLE, raising=False)
    expected.clear()
    expected.use_folder(None)
    calls.clear()
    yield
    expected.use_folder(None)
    expected.clear()


def test_a_hit_returns_an_equal_but_independent_copy():
    x = torch.arange(6.0).reshape(2, 3)
    first = scaled(x)
    first["out"] += 100  # a test that mutates its result ...
    first["both"][1].arrays[0].zero_()
    second = scaled(x)
    third = scaled(x)
    assert calls == [("scaled", 2.0)]
    assert (expected.stats.misses, expected.stats.hits) == (1, 2)
    torch.testing.assert_close(second["out"], x * 2)  # ... cannot change the next one's
    torch.testing.assert_close(second["both"][1].arrays[0], x + 1)
    assert isinstance(second["both"], tuple) and isinstance(second["both"][1], AnyOf)
    assert second["out"].data_ptr() != third["out"].data_ptr()
    second["out"][0, 0] = -1
    assert float(third["out"][0, 0]) == 0.0


def test_numpy_results_are_copied_too():
    a = np.arange(4.0)
    got = anything(a)
    got[0] = 99.0
    assert anything(np.arange(4.0))[0] == 0.0
    assert len(calls) == 1


def test_different_arguments_are_different_entries():
    x = torch.ones(2, 3)
    scaled(x)
    scaled(x.double())  # same values, another dtype
    scaled(x.reshape(3, 2))  # same bytes, another shape
    scaled(x, 3.0)
    scaled(x, factor=3.0)  # given by name: its own entry (never a wrong one)
    scaled(x, shift=1.0)
    scaled(torch.ones(2, 3))  # equal to the first: a hit
    assert len(calls) == 6
    assert expected.stats.hits == 1
    assert anything(1) == 1 and anything(True) is True and anything(1.0) == 1.0
    assert len(calls) == 9  # 1, True and 1.0 are three keys


def test_mappings_and_sequences_are_keys_by_content():
    state = {"w": torch.ones(2), "b": torch.zeros(2)}
    anything([state, (1, "a"), None, torch.float32])
    anything([{"w": torch.ones(2), "b": torch.zeros(2)}, (1, "a"), None, torch.float32])
    anything([{"b": torch.zeros(2), "w": torch.ones(2)}, (1, "a"), None, torch.float32])
    anything([{"w": torch.ones(2), "b": torch.zeros(2)}, [1, "a"], None, torch.float32])
    assert len(calls) == 3  # order of a mapping and tuple-versus-list make their own entries


@pytest.mark.parametrize("draws", [noisy_torch, noisy_numpy], ids=["torch", "numpy"])
def test_a_function_that_draws_from_the_global_generators_is_not_stored(draws):
    x = torch.zeros(3, dtype=torch.float64)
    torch.manual_seed(0)
    np.random.seed(0)
    with pytest.warns(ExpectedValueImpure, match=draws.__qualname__):
        first = draws(x.numpy() if draws is noisy_numpy else x)
    torch.manual_seed(0)
    np.random.seed(0)
    again = draws(x.numpy() if draws is noisy_numpy else x)
    assert len(calls) == 2  # called again: a hit would have skipped the draw
    np.testing.assert_array_equal(np.asarray(first), np.asarray(again))
    assert expected.stats.impure == {f"{draws.__module__}.{draws.__qualname__}": 2}
    assert expected.stats.hits == 0


def test_a_draw_inside_fork_rng_leaves_the_function_pure():
    rng_neutral(torch.ones(2))
    rng_neutral(torch.ones(2))
    assert calls == [("rng_neutral",)]
    assert not expected.stats.impure


def test_arguments_that_are_not_values_are_called_through():
    class RemoteLike:
        pass

    remote, generator = RemoteLike(), np.random.default_rng(0)
    for _ in range(2):
        assert anything(remote) is remote
        anything(generator)
        anything([1, len])
        anything(np.array([object()], dtype=object))
    assert len(calls) == 8
    assert expected.stats.passed_through == 8 and expected.stats.hits == 0


def test_results_that_are_not_values_are_not_stored():
    module = torch.nn.Linear(2, 2)
    assert anything((1.0, module))[1] is module
    anything((1.0, module))  # an argument that is a module: called through anyway
    leaf = torch.ones(2)
    anything(leaf.requires_grad_())
    anything(torch.ones(2).requires_grad_())
    assert len(calls) == 4 and expected.stats.hits == 0


def test_a_call_that_raises_stores_nothing():
    for _ in range(2):
        with pytest.raises(ValueError):
            failing(torch.ones(1))
    assert len(calls) == 2


def test_the_environment_can_turn_the_memo_off(monkeypatch):
    monkeypatch.setenv(expected.DISABLE, "1")
    scaled(torch.ones(2))
    scaled(torch.ones(2))
    assert len(calls) == 2 and expected.stats.hits == 0


def test_entries_written_by_a_forked_child_are_read_by_the_parent(tmp_path: Path):
    folder = tmp_path / "out" / ".expected"
    folder.mkdir(parents=True)
    (folder / "stale.entry").write_bytes(b"from an earlier batch")
    expected.use_folder(folder)
    assert list(folder.iterdir()) == []  # emptied: nothing outlives its batch
    assert folder.stat().st_mode & 0o777 == 0o700
    x = torch.arange(3.0)
    pid = os.fork()
    if pid == 0:  # a learner's child: computes, writes its misses
        try:
            scaled(x, shift=0.5)
            anything({"a": np.arange(2), "n": np.float64(2.5), "s": "text", "none": None})
        finally:
            os._exit(0)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    names = [p.name for p in folder.iterdir()]
    assert len(names) == 2 and all(n.endswith(".entry") for n in names), names  # no temporary
    assert expected.refresh() == 2
    assert expected.refresh() == 0  # each file read once
    got = scaled(x, shift=0.5)
    other = anything({"a": np.arange(2), "n": np.float64(2.5), "s": "text", "none": None})
    assert calls == []  # both computed by the child only
    torch.testing.assert_close(got["shifted"], x + 0.5)
    assert isinstance(got["both"][1], AnyOf)
    torch.testing.assert_close(got["both"][1].arrays[1], x - 1)
    np.testing.assert_array_equal(other["a"], np.arange(2))
    assert other["n"] == 2.5 and other["s"] == "text" and other["none"] is None
    assert expected.stats.loaded == 2 and expected.stats.hits == 2


def test_misses_are_written_once_and_hits_write_nothing(tmp_path: Path):
    expected.use_folder(tmp_path)
    for _ in range(3):
        scaled(torch.ones(2))
    assert expected.stats.written == 1
    assert len(list(tmp_path.glob("*.entry"))) == 1


def test_damaged_or_foreign_files_are_skipped_never_unpickled(tmp_path: Path):
    expected.use_folder(tmp_path)
    x = torch.ones(2)
    scaled(x)
    (entry,) = tmp_path.glob("*.entry")
    good = entry.read_bytes()
    expected.clear()
    # A pickle that would run code, a truncated entry, and a good entry under the wrong name.
    (tmp_path / "evil.entry").write_bytes(pickle.dumps(random.Random))
    (tmp_path / "half.entry").write_bytes(good[: len(good) // 2])
    (tmp_path / ("0" * 64 + ".entry")).write_bytes(good)
    entry.unlink()
    assert expected.refresh() == 0
    scaled(x)
    assert calls == [("scaled", 2.0)] * 2  # computed again, as without any entry
    with pytest.raises(wire.WireError):
        wire.loads((tmp_path / "evil.entry").read_bytes())


def test_a_folder_that_cannot_be_made_only_means_no_sharing(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    expected.use_folder(blocker / ".expected")
    scaled(torch.ones(2))
    scaled(torch.ones(2))
    assert calls == [("scaled", 2.0)] and expected.stats.written == 0
