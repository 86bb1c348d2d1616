"""The commit status of a graded learner: what `autograder publish --statuses` sends.

One status per gradebook row that names a commit (``POST /repos/{owner}/{repo}/statuses/{sha}``):

* context: ``<course> / hidden tests`` (CONTEXT), the name a learner sees next to the commit;
* state: ``success`` when the row meets the pass rule, ``failure`` when not, ``error`` when
  the row is a grading error (the grader could not grade that commit);
* description: the score and the verdict, at most 140 characters (GitHub's limit); never a
  test's name or values, nor the row's error (it may quote the instructor's files);
* target_url: the Actions run that graded it, when known (GITHUB_SERVER_URL, GITHUB_REPOSITORY,
  GITHUB_RUN_ID); it is in the instructor's private repository, so only they can open it.

A row without a commit (nothing submitted, a repository that could not be fetched) gets none.
Under the rule ``all`` a row passes with full marks (every test passed); under
``min_score:N`` with a total of at least N.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from autograder.gradebook.store import LearnerRecord
from autograder.results import points
from autograder.results.pass_rule import PassRule

CONTEXT = "{course} / hidden tests"
DESCRIPTION = "{score} / {max_score} points with the hidden tests: {verdict}"
PASSED = "passed"
NOT_PASSED_ALL = "not passed yet (every test must pass)"
NOT_PASSED_MIN = "not passed yet ({minimum} needed)"
NOT_GRADED = "Not graded: the grader could not grade this commit; your instructor sees why."
DESCRIPTION_LIMIT = 140


@dataclass(frozen=True)
class Status:
    """One commit status for one learner's repository (``owner/name``) and commit."""

    learner: str
    repository: str
    sha: str
    state: str
    description: str
    context: str
    target_url: str = ""

    @property
    def path(self) -> str:
        return f"/repos/{self.repository}/statuses/{self.sha}"

    def payload(self) -> dict[str, str]:
        """The JSON body GitHub's API takes."""
        body = {"state": self.state, "context": self.context, "description": self.description}
        if self.target_url:
            body["target_url"] = self.target_url
        return body

    def same_as(self, sent: Mapping[str, object]) -> bool:
        """Whether ``sent`` (published.json) records this very status (the run aside)."""
        return all(
            sent.get(key) == value
            for key, value in (
                ("commit", self.sha),
                ("state", self.state),
                ("description", self.description),
                ("context", self.context),
            )
        )


def context_for(course: str) -> str:
    """The status context for a course (its name, e.g. 'Transformers 101 / hidden tests')."""
    return CONTEXT.format(course=course)


def run_url(env: Mapping[str, str]) -> str:
    """The Actions run's URL from its environment, or "" outside Actions."""
    parts = [env.get(k, "") for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")]
    return f"{parts[0].rstrip('/')}/{parts[1]}/actions/runs/{parts[2]}" if all(parts) else ""


def passes(record: LearnerRecord, rule: PassRule) -> bool:
    """Whether a graded row meets the pass rule (``all``: full marks)."""
    total, max_score = record.total or 0.0, record.max_score or 0.0
    if rule.min_score is None:
        return max_score > 0 and total + 1e-9 >= max_score
    return total + 1e-9 >= rule.min_score


def status_for(
    record: LearnerRecord, repository: str, rule: PassRule, context: str, target_url: str = ""
) -> Status | None:
    """The status of a gradebook row, or None when it names no commit."""
    if not record.commit or record.pending:
        return None
    if record.failed:
        state, description = "error", NOT_GRADED
    else:
        ok = passes(record, rule)
        if ok:
            verdict = PASSED
        elif rule.min_score is None:
            verdict = NOT_PASSED_ALL
        else:
            verdict = NOT_PASSED_MIN.format(minimum=f"{rule.min_score:g}")
        state = "success" if ok else "failure"
        description = DESCRIPTION.format(
            score=points(record.total or 0.0),
            max_score=points(record.max_score or 0.0),
            verdict=verdict,
        )
    return Status(
        learner=record.learner,
        repository=repository,
        sha=record.commit,
        state=state,
        description=description[:DESCRIPTION_LIMIT],
        context=context[:255],
        target_url=target_url,
    )
