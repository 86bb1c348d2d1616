"""A learner who gave nothing to grade (an empty repository, no commit, no commit before the
deadline) is listed apart from the learners whose grading errored (H47: counted as errors 3 on
the progress bar and listed as errored, they could not be told from a grading that broke)."""

from __future__ import annotations

from autograder.gradebook import report, report_model, snapshot, store

from .conftest import AFTER, DEADLINE, TOY, commit_all, copy_package, grade_class_main, init_repo


def test_nothing_to_grade_is_its_own_list(tmp_path, capsys):
    roster, out = tmp_path / "roster", tmp_path / "out"
    init_repo(roster / "late")  # every commit after the deadline
    copy_package(TOY / "solution", roster / "late")
    commit_all(roster / "late", "done, late", when=AFTER)
    init_repo(roster / "nocommit")  # a repository without a commit
    (roster / "plain").mkdir(parents=True)  # a folder that is no repository: an error
    (roster / "plain" / "x.txt").write_text("not a repository\n")
    assert grade_class_main(roster, out, deadline=DEADLINE, quiet=False) == 1
    records = {r.learner: r for r in store.read_records(out)}
    assert {name: r.nothing_submitted for name, r in records.items()} == {
        "late": True,
        "nocommit": True,
        "plain": False,
    }
    assert "errors 1" in capsys.readouterr().err  # plain only
    markdown = (out / report.MARKDOWN_FILE).read_text(encoding="utf-8")
    errored = markdown.split("## Learners whose grading errored")[1].split("##")[0]
    nothing = markdown.split("## Learners with nothing to grade")[1].split("##")[0]
    assert "`plain`" in errored and "`late`" not in errored and "`nocommit`" not in errored
    assert "`late`" in nothing and "no commit at or before the deadline" in nothing
    assert "`nocommit`" in nothing
    assert f"| [`late`](late/summary.md) |  |  | {report_model.NOTHING_SUBMITTED} |" in markdown
    assert "Learners with nothing to grade" in (out / report.HTML_FILE).read_text()


def test_a_shallow_clone_is_no_case_of_nothing_submitted():
    assert issubclass(snapshot.NothingSubmitted, snapshot.SnapshotError)
    assert not issubclass(snapshot.SnapshotError, snapshot.NothingSubmitted)
