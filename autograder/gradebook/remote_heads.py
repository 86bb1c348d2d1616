"""The learners whose repository moved on since their row was graded.

The learners whose repository moved on since their row was graded (grade-class
--regrade-moved, and the plan of the scheduled hidden grading).

A learner with a row in DIR moved when their repository's HEAD is not the commit the row
names (an error row or an empty repository's row names none: any first commit is a move):

* given by clone URL: the server's HEAD, from ``git ls-remote URL HEAD``, without fetching
  anything (what a scheduled run that finds nothing new costs: one small request each);
* a local git repository: its HEAD (newer_commits.py's comparison);
* a folder that is not a repository has no commit to compare: never moved.

A repository that cannot be asked (the server unreachable, a time-out) is not counted as moved:
its row is kept and ``say`` is told why; the next run asks again. Several are asked at once.
With a deadline, a HEAD that moved after it still counts (only a fetch could tell): the learner
is graded again and gets the same row.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from autograder.gradebook import newer_commits, store
from autograder.gradebook.fetch import FETCH_JOBS
from autograder.gradebook.git_network import Commands, cause, network_env
from autograder.gradebook.roster import Learner
from autograder.gradebook.url_secrets import carries_credentials, shown

ASK_TIMEOUT = 60.0  # seconds for one ls-remote
NOT_ASKED = (
    "Could not ask {url} for {learner}'s last commit ({detail}); their row is kept, and the "
    "next run asks again."
)


def moved(
    learners: list[Learner],
    records: Mapping[str, store.LearnerRecord | None],
    say: Callable[[str], None] = lambda line: None,
    jobs: int = FETCH_JOBS,
) -> list[str]:
    """The ids, sorted, of the learners with a record whose repository's HEAD is another
    commit than the record's."""
    rows = {learner.id: records.get(learner.id) for learner in learners}
    local = [(lr, rows[lr.id]) for lr in learners if not lr.url and rows[lr.id] is not None]
    ids = set(newer_commits.moved(local))
    remote = [lr for lr in learners if lr.url and rows[lr.id] is not None]
    if remote:
        commands = Commands()
        try:
            with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(remote)))) as pool:
                heads = list(pool.map(lambda lr: _remote_head(lr, commands, say), remote))
        finally:
            commands.close()
        for learner, head in zip(remote, heads, strict=True):
            if head is not None and head != rows[learner.id].commit:
                ids.add(learner.id)
    return sorted(ids)


def _remote_head(learner: Learner, commands: Commands, say: Callable[[str], None]) -> str | None:
    """The commit the server's HEAD names ("" for an empty repository), or None when the
    server could not be asked (said through ``say``)."""
    url = learner.url
    helper = ["-c", "credential.helper="] if carries_credentials(url) else []
    done = commands.run([*helper, "ls-remote", "--", url, "HEAD"], network_env(), ASK_TIMEOUT)
    if done.ok:
        return done.stdout.partition("\t")[0].strip()
    if not commands.stopped:
        if done.status is None:
            detail = f"no answer within {ASK_TIMEOUT:.0f} s"
        else:
            detail = shown(url, cause(done.stderr, done.status))
        say(NOT_ASKED.format(url=shown(url), learner=learner.id, detail=detail))
    return None


def moved_in(roster: list[Learner], out: Path, say: Callable[[str], None]) -> list[str]:
    """``moved`` for a roster's learners and the rows in DIR (the scheduled workflow's plan)."""
    return moved(
        roster, {learner.id: store.read_record(out, learner.id) for learner in roster}, say
    )
