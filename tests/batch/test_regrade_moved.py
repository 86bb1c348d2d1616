"""grade-class --regrade-moved grades again exactly the learners whose repository moved on
since their row: a local repository's HEAD, or a clone URL's server HEAD (git ls-remote, no
fetch); the others keep their rows, and a server that cannot be asked keeps its learner's."""

from __future__ import annotations

import shutil

from autograder.gradebook import remote_heads, store
from autograder.gradebook.roster import Learner, read_roster

from .conftest import (
    AFTER,
    TOY,
    commit_all,
    copy_package,
    git,
    grade_class_main,
    init_repo,
    needs_git_daemon,
    url_roster,
)


def _runs(out) -> dict[str, str]:
    return {r.learner: r.run_id for r in store.read_records(out)}


def test_only_local_repositories_with_a_new_commit_are_graded_again(tmp_path):
    roster, out = tmp_path / "roster", tmp_path / "out"
    for name in ("ada", "bo", "cy"):
        init_repo(roster / name)
        copy_package(TOY / "solution", roster / name)
        commit_all(roster / name, "done", when=AFTER)
    init_repo(roster / "dee")  # empty: a row without a commit
    assert grade_class_main(roster, out) == 1
    first = _runs(out)
    assert grade_class_main(roster, out, regrade_moved=True) == 1
    assert _runs(out) == first  # nothing moved: nothing graded

    (roster / "bo" / "NOTES.md").write_text("a fix\n")
    fix = commit_all(roster / "bo", "fix", when=AFTER)
    copy_package(TOY / "solution", roster / "dee")
    commit_all(roster / "dee", "first", when=AFTER)
    assert grade_class_main(roster, out, regrade_moved=True) == 0
    now = _runs(out)
    assert {name for name in now if now[name] != first[name]} == {"bo", "dee"}
    assert store.read_record(out, "bo").commit == fix


@needs_git_daemon
def test_a_clone_url_is_asked_for_its_head_without_fetching(tmp_path, git_server, toy_class):
    base, served = git_server
    shutil.copytree(served / "good.git", served / "mine.git")
    roster = url_roster(tmp_path, {"mine": f"{base}/mine.git", "gone": "git://127.0.0.1:1/x.git"})
    out = tmp_path / "out"
    assert grade_class_main(roster, out) == 1  # gone: cannot be cloned
    mine = store.read_record(out, "mine")
    learners = read_roster(roster)
    records = {lr.id: store.read_record(out, lr.id) for lr in learners}
    said: list[str] = []
    assert remote_heads.moved(learners, records, said.append) == []  # gone: cannot be asked
    assert len(said) == 1
    # a new commit pushed to the server: mine moved; nothing was fetched to learn it
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(served / "mine.git"), str(work))
    (work / "NOTES.md").write_text("pushed\n")
    pushed = commit_all(work, "pushed", when=AFTER)
    git(work, "push", "-q", "origin", "HEAD:main")
    copy = out / ".repos" / "mine.git"
    before = git(copy, "rev-parse", "HEAD")
    said.clear()
    assert remote_heads.moved(learners, records, said.append) == ["mine"]
    assert git(copy, "rev-parse", "HEAD") == before
    assert (
        len(said) == 1 and "Could not ask git://127.0.0.1:1/x.git for gone's last commit" in said[0]
    )
    assert grade_class_main(roster, out, regrade_moved=True) == 1
    assert store.read_record(out, "mine").commit == pushed != mine.commit


def test_a_learner_without_a_row_is_not_asked():
    learners = [Learner("new", None, url="git://127.0.0.1:1/new.git")]
    assert remote_heads.moved(learners, {"new": None}) == []
