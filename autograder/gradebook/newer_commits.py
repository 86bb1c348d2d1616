"""Kept rows whose repository has moved on since they were graded (H47).

A rerun keeps every finished row (that is what makes it resume), so a learner who pushed a fix,
or made the first commit of an empty repository, kept the old row, and the command said only
that everyone already had a result. Without --deadline the row should name the repository's
last commit: `moved` finds the kept learners whose HEAD is another commit now, and `note` is the
sentence the command prints. The rows stay as they are: regrading them is the instructor's call
(--regrade LEARNER, or --force).

Only local git repositories are looked at: a clone URL's copy is fetched only for learners
being graded, and a folder that is not a repository has no commit to compare.
"""

from __future__ import annotations

from collections.abc import Iterable

from autograder.gradebook import snapshot, store
from autograder.gradebook.roster import Learner

NOTE = (
    "{learners} a newer commit than the one their row in {out} was graded at, or a first "
    "commit since their row said there was none: {who}. Their rows are kept; --regrade "
    "LEARNER grades one again, --force everyone."
)
SHOWN = 10  # learners named in the note; the others are counted


def moved(kept: Iterable[tuple[Learner, store.LearnerRecord]]) -> list[str]:
    """The ids of the kept learners (with their rows) whose local git repository's HEAD is not
    the commit their row names (an error row names none)."""
    ids = []
    for learner, record in kept:
        if learner.url or learner.repo is None or not snapshot.is_git_repository(learner.repo):
            continue
        try:
            head = snapshot.local_git(
                learner.repo, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False
            )
        except snapshot.SnapshotError:  # git could not run: nothing to say about this one
            continue
        if head and head != record.commit:
            ids.append(learner.id)
    return ids


def note(ids: list[str], out: object) -> str:
    """The command's sentence for `moved`'s ids ("" for none)."""
    if not ids:
        return ""
    learners = "1 learner has" if len(ids) == 1 else f"{len(ids)} learners have"
    who = ", ".join(ids[:SHOWN])
    if len(ids) > SHOWN:
        who += f" and {len(ids) - SHOWN} more"
    return NOTE.format(learners=learners, out=out, who=who)
