"""One summary comment of the instructor's grade on a learner's open pull requests.

`autograder publish --comment` comments on every open pull request of the learner's
repository whose head is the graded commit (GitHub Classroom's "Feedback" pull request has the
default branch as its head; so has any pull request opened from the branch graded). The
comment is found again by its hidden marker (INSTRUCTOR_MARKER) and edited, never repeated:
only a comment by the same account as the token (``GET /user``; for a GitHub App's token,
which cannot read it, a bot account) counts, so that a learner's own comment quoting the
marker is never taken for it.

The body holds only trusted text: the course's and components' titles, the scores, the pass
rule's verdict and the commit. Never a test's name, its values or a row's error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from autograder.github.commit_status import Status
from autograder.github.rest import Api, ApiError
from autograder.gradebook.store import LearnerRecord
from autograder.results import points

INSTRUCTOR_MARKER = "<!-- t101-autograder:instructor-grade -->"
HEADING = "## {course}: your instructor's grade, {score} / {max_score}"
VERDICT = {"success": "✅", "failure": "❌"}  # the status description says passed or not
COMMIT = "Graded at commit `{sha}`."
HIDDEN_NOTE = (
    "These scores include hidden tests, which your instructor runs but does not show you. The "
    "commit status **{context}** on this commit shows the same score. After you push again, "
    "this comment changes once your instructor's next grading run has graded your new commit. "
    "To find out why a hidden test failed, ask your instructor for your summary.md."
)
APP_BOT = "[bot]"
ACTIONS_BOT = "github-actions[bot]"  # a learner's own workflow posts as this account


def comment_body(
    record: LearnerRecord, status: Status, course: str, titles: Iterable[tuple[str, str]]
) -> str:
    """The comment: marker, heading, verdict, commit, a table of component scores, the note.
    ``titles``: (component name, title) in the course's order."""
    lines = [
        INSTRUCTOR_MARKER,
        HEADING.format(
            course=course,
            score=points(record.total or 0.0),
            max_score=points(record.max_score or 0.0),
        ),
        "",
        f"{VERDICT.get(status.state, '')} {status.description}".strip(),
        "",
        COMMIT.format(sha=status.sha[:12]),
        "",
        "| Component | Score |",
        "| --- | ---: |",
    ]
    for name, title in titles:
        if name in record.components:
            lines.append(f"| {title} | {points(record.components[name])} |")
    lines += ["", HIDDEN_NOTE.format(context=status.context), ""]
    return "\n".join(lines)


@dataclass
class Commenter:
    """Posts or edits the marked comment on pull requests, through ``api``; learns once whose
    comments count (the token's account)."""

    api: Api
    _viewer: str | None = None
    _asked: bool = False

    def viewer(self) -> str | None:
        """The token's account (None for a GitHub App's token, which cannot read /user)."""
        if not self._asked:
            self._asked = True
            try:
                self._viewer = str((self.api.call("GET", "/user") or {}).get("login") or "")
            except ApiError as error:
                if error.transient:
                    self._asked = False
                    raise
                self._viewer = None
        return self._viewer or None

    def ours(self, comment: Mapping) -> bool:
        """Whether a comment is one this account made with the marker."""
        if INSTRUCTOR_MARKER not in str(comment.get("body") or ""):
            return False
        login = str((comment.get("user") or {}).get("login") or "")
        viewer = self.viewer()
        if viewer is not None:
            return login == viewer
        return login.endswith(APP_BOT) and login != ACTIONS_BOT

    def publish(self, status: Status, body: str, known: Mapping[str, int]) -> dict[str, int]:
        """Comment on every open pull request whose head is the graded commit; the comments
        made or edited ({"owner/name#N": id}). ``known``: those of an earlier publish."""
        repo = status.repository
        done: dict[str, int] = {}
        for pull in self.api.pages(f"/repos/{repo}/pulls", {"state": "open"}):
            if (pull.get("head") or {}).get("sha") != status.sha:
                continue
            key = f"{repo}#{pull['number']}"
            done[key] = self._one(repo, int(pull["number"]), body, known.get(key))
        return done

    def _one(self, repo: str, number: int, body: str, known: int | None) -> int:
        if known is not None:
            try:
                self.api.call(
                    "PATCH", f"/repos/{repo}/issues/comments/{known}", body={"body": body}
                )
                return known
            except ApiError as error:
                if error.status != 404:  # deleted meanwhile: find or make another
                    raise
        for comment in self.api.pages(f"/repos/{repo}/issues/{number}/comments"):
            if self.ours(comment):
                path = f"/repos/{repo}/issues/comments/{comment['id']}"
                self.api.call("PATCH", path, body={"body": body})
                return int(comment["id"])
        made = self.api.call("POST", f"/repos/{repo}/issues/{number}/comments", body={"body": body})
        return int(made["id"])
