"""Publishing a grade to GitHub Actions: annotations, job summary, step outputs, PR comment.

Reads the runner's environment (GITHUB_STEP_SUMMARY, GITHUB_OUTPUT, GITHUB_EVENT_PATH,
GITHUB_SHA, GITHUB_SERVER_URL, GITHUB_REPOSITORY, GITHUB_RUN_ID) and writes:
* one `::error` annotation per component that lost points, at its function (annotations.py);
* the job summary (appended, as the runner expects);
* outputs `score`, `max_score`, `passed`, `hidden_included`, `protected_changed`;
* `comment.md` in the report folder: the body the workflow's comment job posts or edits.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from autograder.atomic_files import atomic_write_text
from autograder.config import CourseConfig
from autograder.github import summary
from autograder.github.annotations import component_annotations
from autograder.github.command_guard import commands_stream
from autograder.github.workflow_commands import (
    Annotation,
    new_stop_token,
    resume_commands,
    stop_commands,
)
from autograder.learner_text import for_log
from autograder.points_text import points
from autograder.release.manifest import ProtectedChange
from autograder.results import GradeResult
from autograder.results.pass_rule import PassRule

COMMENT_FILE = "comment.md"
NOT_GRADED_TITLE = "Not graded"


def event_payload(env: Mapping[str, str]) -> dict[str, Any]:
    """The triggering event's payload, or {} when there is none or it cannot be read."""
    path = env.get("GITHUB_EVENT_PATH", "")
    try:
        payload = json.loads(Path(path).read_text(encoding="utf-8")) if path else {}
    except (OSError, ValueError):
        return {}
    return payload if isinstance(payload, dict) else {}


def commit_and_url(env: Mapping[str, str]) -> tuple[str, str]:
    """The commit graded (a pull request's head, else GITHUB_SHA) and this run's URL."""
    pull = event_payload(env).get("pull_request")
    head = pull.get("head") if isinstance(pull, dict) else None
    sha = str(head.get("sha", "")) if isinstance(head, dict) else ""
    sha = sha or env.get("GITHUB_SHA", "")
    parts = [env.get(k, "") for k in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")]
    url = f"{parts[0]}/{parts[1]}/actions/runs/{parts[2]}" if all(parts) else ""
    return sha, url


def publish_grade(
    config: CourseConfig,
    result: GradeResult,
    *,
    package_dir: Path,
    out_dir: Path,
    rule: PassRule,
    changes: Sequence[ProtectedChange],
    stream: TextIO,
    env: Mapping[str, str] | None = None,
) -> bool:
    """Publish a graded submission; True when the pass rule is met."""
    env = os.environ if env is None else env
    for annotation in component_annotations(config, result, package_dir):
        print(annotation.command(), file=stream)
    for change in changes:
        print(
            Annotation("warning", for_log(change.sentence), file=change.path).command(), file=stream
        )
    passed = rule.passed(result)
    _append(env.get("GITHUB_STEP_SUMMARY"), summary.step_summary(result, rule, changes))
    outputs = {
        "score": points(result.score),
        "max_score": points(result.max_score),
        "passed": "true" if passed else "false",
        "hidden_included": "true" if result.hidden_included else "false",
        "protected_changed": str(len(changes)),
    }
    _append(env.get("GITHUB_OUTPUT"), "".join(f"{k}={v}\n" for k, v in outputs.items()))
    sha, url = commit_and_url(env)
    body = summary.comment_body(result, rule, changes, sha=sha, run_url=url)
    atomic_write_text(Path(out_dir) / COMMENT_FILE, body)
    return passed


def publish_not_graded(
    sentence: str, *, out_dir: Path, stream: TextIO, env: Mapping[str, str] | None = None
) -> None:
    """Publish a submission that could not be graded: one annotation, summary and comment."""
    env = os.environ if env is None else env
    print(Annotation("error", for_log(sentence), title=NOT_GRADED_TITLE).command(), file=stream)
    _append(env.get("GITHUB_STEP_SUMMARY"), summary.not_graded_summary(sentence))
    _append(env.get("GITHUB_OUTPUT"), "passed=false\n")
    atomic_write_text(Path(out_dir) / COMMENT_FILE, summary.not_graded_comment(sentence))


def _append(path: str | None, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as stream:
            stream.write(text)


GITHUB_ONE = (
    "--github publishes one grade to the workflow run; got {count} submissions, so grade "
    "the repository the workflow runs in (usually `.`)."
)


class GithubRun:
    """One `autograder grade --github` run: commands stopped while learner-influenced text may
    be printed, then published (annotations, summary, outputs, comment)."""

    def __init__(self, rule: PassRule, stream: TextIO | None = None) -> None:
        self.rule = rule
        # The only writer of real workflow commands: under the guard every other line passes
        self.stream = stream if stream is not None else commands_stream(sys.stdout)
        self.token = new_stop_token()

    def start(self) -> None:
        """From here on the runner ignores workflow commands (a learner cannot forge one)."""
        print(stop_commands(self.token), file=self.stream, flush=True)

    def finish(
        self,
        config: CourseConfig,
        outcome: GradeResult | Any,
        *,
        submission: Path,
        out_dir: Path,
    ) -> int:
        """Resume commands and publish; the exit status (0 pass rule met, 1 not, 2 ungraded)."""
        sys.stderr.flush()
        print(resume_commands(self.token), file=self.stream, flush=True)
        if not isinstance(outcome, GradeResult):
            publish_not_graded(outcome.reason, out_dir=out_dir, stream=self.stream)
            return 2
        changes = [
            ProtectedChange(c["path"], c["expected"], c["got"])
            for c in getattr(outcome, "protected_changes", [])
        ]
        passed = publish_grade(
            config,
            outcome,
            package_dir=config.package_dir_for(submission),
            out_dir=out_dir,
            rule=self.rule,
            changes=changes,
            stream=self.stream,
        )
        self.stream.flush()
        return 0 if passed else 1
