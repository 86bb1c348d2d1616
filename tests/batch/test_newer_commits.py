"""A rerun keeps finished rows; when a kept learner's repository has a newer commit (or a first
one since their row said it had none), the command says so and how to regrade them (H47: it said
only that everyone already had a result, and the rows went stale in silence)."""

from __future__ import annotations

from autograder.gradebook import newer_commits, store

from .conftest import AFTER, TOY, commit_all, copy_package, grade_class_main, init_repo


def _class(tmp_path):
    """ada: a toy solution committed; bo: an empty repository (an error row); cy: a folder."""
    roster, out = tmp_path / "roster", tmp_path / "out"
    init_repo(roster / "ada")
    copy_package(TOY / "solution", roster / "ada")
    commit_all(roster / "ada", "done", when=AFTER)
    init_repo(roster / "bo")
    copy_package(TOY / "solution", roster / "cy")
    return roster, out


def test_a_newer_commit_and_a_first_commit_are_named(tmp_path, capsys):
    roster, out = _class(tmp_path)
    assert grade_class_main(roster, out) == 1  # bo: no commits yet
    before = {r.learner: r.to_json() for r in store.read_records(out)}
    capsys.readouterr()
    assert grade_class_main(roster, out) == 1
    assert "a newer commit than" not in capsys.readouterr().err  # nothing moved

    (roster / "ada" / "NOTES.md").write_text("a fix\n")
    commit_all(roster / "ada", "fix", when=AFTER)
    copy_package(TOY / "solution", roster / "bo")
    commit_all(roster / "bo", "first", when=AFTER)
    (roster / "cy" / "NOTES.md").write_text("no repository: never named\n")
    assert grade_class_main(roster, out) == 1
    said = " ".join(capsys.readouterr().err.split())
    assert newer_commits.note(["ada", "bo"], out.resolve()) in said
    assert {r.learner: r.to_json() for r in store.read_records(out)} == before  # rows kept

    assert grade_class_main(roster, out, regrade=["ada", "bo"]) == 0
    assert "a newer commit than" not in capsys.readouterr().err


def test_the_note_names_ten_and_counts_the_rest():
    ids = [f"l{i:02d}" for i in range(12)]
    said = newer_commits.note(ids, "out")
    assert said.startswith("12 learners have a newer commit")
    assert ": l00, l01, l02, l03, l04, l05, l06, l07, l08, l09 and 2 more. Their rows" in said
    assert newer_commits.note([], "out") == ""
