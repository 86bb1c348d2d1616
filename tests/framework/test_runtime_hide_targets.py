"""isolation.hide_targets on plain strings: what "under" means (whole components, not string
prefixes) and the order of the covers (pathlib's, component by component)."""

from __future__ import annotations

from pathlib import Path

from autograder.runtime.harness import isolation


def make(root: Path, *names: str) -> None:
    for name in names:
        (root / name).mkdir(parents=True)


def test_a_sibling_whose_name_extends_a_kept_folder_is_still_covered(tmp_path: Path):
    make(tmp_path, "course/main/keep", "course/main-x", "course/main.d", "course/other")
    root = tmp_path / "course"
    targets = isolation.hide_targets([root], [root / "main" / "keep"])
    assert targets == [str(root / "main-x"), str(root / "main.d"), str(root / "other")]


def test_covers_come_in_pathlib_order_and_each_once(tmp_path: Path):
    make(tmp_path, "a-c", "a/b", "a/k")
    roots = [tmp_path / "a-c", tmp_path / "a" / "b", tmp_path / "a" / "b", tmp_path / "a"]
    targets = isolation.hide_targets(roots, [tmp_path / "a" / "k"])
    # "/a/b" sorts before "/a-c" component by component (as strings it would come after)
    assert targets == [str(tmp_path / "a" / "b"), str(tmp_path / "a-c")]


def test_keeping_the_root_of_everything_covers_nothing(tmp_path: Path):
    make(tmp_path, "x/y")
    assert isolation.hide_targets([tmp_path / "x"], [Path("/")]) == []
    assert isolation.hide_targets([tmp_path / "x"], [tmp_path / "x"]) == []
    assert isolation.hide_targets([tmp_path / "x"], [tmp_path / "x" / "y"]) == []
