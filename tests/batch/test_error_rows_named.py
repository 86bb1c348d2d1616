"""An error row about a learner's exported commit names their repository and the commit, not the
throwaway folder it was exported to (H48: the gradebook's errors cell changed on every --force,
and the learner's summary quoted a path they never saw), with what the export left out."""

from __future__ import annotations

from autograder.gradebook import store

from .conftest import BEFORE, TOY, commit_all, copy_package, grade_class_main, init_repo


def test_a_package_committed_as_a_symbolic_link(tmp_path):
    roster, out = tmp_path / "roster", tmp_path / "out"
    repo = roster / "sym"
    init_repo(repo)
    copy_package(TOY / "solution", tmp_path / "elsewhere")
    (repo / "toypkg").symlink_to(tmp_path / "elsewhere" / "toypkg")
    commit = commit_all(repo, "a link to my package", when=BEFORE)
    assert grade_class_main(roster, out) == 1
    error = store.read_record(out, "sym").error
    assert f"{repo} at commit {commit[:12]}" in error
    assert "t101-batch-" not in error and "/tmp/t101" not in error
    left_out = " Left out of the commit, so not graded: toypkg (a symbolic link: commit the "
    assert error.endswith(left_out + "file itself).")
    summary = " ".join((out / "sym" / "summary.md").read_text(encoding="utf-8").split())
    assert f"sym at commit {commit[:12]} has no package folder toypkg" in summary
    assert left_out + "file itself)." in summary
    assert grade_class_main(roster, out, force=True) == 1
    assert store.read_record(out, "sym").error == error  # the same words on every run
