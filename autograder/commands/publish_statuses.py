"""`autograder publish DIR --statuses [--comment]`: grades of a gradebook onto GitHub.

1. read the course (its name, components and pass rule), the roster (each learner's GitHub
   repository: github/repositories.py) and DIR's rows (store.read_records);
2. for every row that names a commit, the commit status (github/commit_status.py); a learner
   whose DIR/<learner>/published.json already records that very status is left alone
   (--resend sends it again), so a scheduled run sends only the learners graded since;
3. with --dry-run, print each request and stop; else send them through GitHub's REST API
   (github/rest.py: $GITHUB_API_URL, the token in $GH_TOKEN, rate limits waited out) and, with
   --comment, post or edit one comment on the learner's open pull requests whose head is the
   graded commit (github/pr_comment.py);
4. record what was sent in published.json; print a table of the learners sent or failed.

The token is never printed, written or put in a sentence (rest.Api.scrub).

Exit status: 0 every status was sent (or nothing was left to send); 1 some learners failed
(their rows in the table say why; a later run tries them again); 2 nothing could be sent (no
token, a bad roster, course or option), with one sentence on stderr.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import httpx
from rich.console import Console
from rich.table import Table
from rich.text import Text

from autograder.config import CourseConfig, CourseConfigError, load_course_option
from autograder.github.commit_status import Status, context_for, run_url, status_for
from autograder.github.pr_comment import Commenter, comment_body
from autograder.github.published import read_published, write_published
from autograder.github.repositories import Repository, read_repositories, server_host
from autograder.github.rest import DEFAULT_API_URL, Api, ApiError
from autograder.gradebook import store
from autograder.gradebook.roster import RosterError
from autograder.results.pass_rule import PassRule, PassRuleError

NOTHING_CHOSEN = "Give --statuses, --comment or both: what to publish."
NO_ROWS = "{out} holds no gradebook rows (no <learner>/record.json); grade the class first."
NOT_IN_ROSTER = "{learner} has a row in {out} but is not in the roster {roster}."
SUMMARY = (
    "{sent} sent, {unchanged} unchanged since sent, {failed} failed, {skipped} without a commit."
)
#: The last line of --dry-run (which else printed nothing for a class without commits).
DRY_RUN_DONE = "Dry run: nothing was sent; requests for {shown} of {total} learners{above}."
#: After DRY_RUN_DONE, for the learners whose row names no commit.
DRY_RUN_NO_COMMIT = (
    " {count} {have} no graded commit (a folder that is not a git repository, or nothing "
    "submitted), so publish sends nothing for them: {who}."
)
_EXIT_OK, _EXIT_FAILED, _EXIT_BAD = 0, 1, 2


@dataclass(frozen=True)
class Options:
    """What to publish: statuses, comments, whether to resend unchanged ones."""

    statuses: bool
    comment: bool
    resend: bool = False


@dataclass(frozen=True)
class Outcome:
    """One learner's line of the table."""

    status: Status | None
    learner: str
    result: str
    failed: bool = False


def main(
    *,
    out: Path,
    roster_path: Path,
    course: Path | None,
    statuses: bool,
    comment: bool,
    dry_run: bool,
    pass_rule: str | None = None,
    resend: bool = False,
    env: Mapping[str, str] | None = None,
    transport: httpx.BaseTransport | None = None,
    sleep: Callable[[float], None] | None = None,
    clock: Callable[[], float] | None = None,
) -> int:
    """Publish DIR's grades; the exit status of the module docstring. ``transport``,
    ``sleep`` and ``clock`` are for tests (httpx's transport, time.sleep, time.time)."""
    env = os.environ if env is None else env
    options = Options(statuses, comment, resend)
    try:
        if not (statuses or comment):
            raise ValueError(NOTHING_CHOSEN)
        config = load_course_option(course)
        rule = PassRule.parse(pass_rule or config.ci.pass_rule)
        repos = read_repositories(Path(roster_path), server_host(env))
        records = store.read_records(Path(out))
        if not records:
            raise ValueError(NO_ROWS.format(out=out))
    except (CourseConfigError, PassRuleError, RosterError, ValueError, OSError) as error:
        return _error(str(error))
    context, target = context_for(config.course.name), run_url(env)
    planned = [
        (record, repos.get(record.learner), _status(record, repos, rule, context, target))
        for record in records
    ]
    if dry_run:
        _print_requests(config, planned, env, options)
        return _EXIT_OK
    try:
        api_kwargs = {k: v for k, v in (("sleep", sleep), ("clock", clock)) if v is not None}
        api = Api(
            env.get("GITHUB_API_URL") or DEFAULT_API_URL,
            env.get("GH_TOKEN", ""),
            transport=transport,
            **api_kwargs,
        )
    except ApiError as error:
        return _error(str(error))
    with api:
        commenter = Commenter(api)
        outcomes = [
            _publish(api, commenter, config, Path(out), record, repo, status, options, roster_path)
            for record, repo, status in planned
        ]
    _print_table(config, outcomes)
    return _EXIT_FAILED if any(o.failed for o in outcomes) else _EXIT_OK


def _status(
    record: store.LearnerRecord,
    repos: Mapping[str, Repository],
    rule: PassRule,
    context: str,
    target: str,
) -> Status | None:
    repo = repos.get(record.learner)
    return status_for(record, repo.name if repo else "", rule, context, target)


def _publish(
    api: Api,
    commenter: Commenter,
    config: CourseConfig,
    out: Path,
    record: store.LearnerRecord,
    repo: Repository | None,
    status: Status | None,
    options: Options,
    roster: Path,
) -> Outcome:
    """Send one learner's status (and comment); what the table says of them."""
    if status is None:
        return Outcome(None, record.learner, "")  # no commit: nothing to publish
    sent = read_published(out, record.learner)
    if (
        not options.resend
        and status.same_as(sent)
        and not sent.get("failed")
        and (not options.comment or "comments" in sent)
    ):
        return Outcome(status, record.learner, "unchanged")
    problem = _repository_problem(record, repo, out, roster)
    if problem:
        write_published(out, record.learner, {"commit": status.sha, "failed": problem})
        return Outcome(status, record.learner, problem, failed=True)
    comments: dict[str, int] = {}
    try:
        if options.statuses:
            api.call("POST", status.path, body=status.payload())
        if options.comment and status.state != "error":
            body = comment_body(record, status, config.course.name, _titles(config))
            comments = commenter.publish(status, body, sent.get("comments") or {})
    except ApiError as error:
        if not error.transient:  # tried again by the next publish, not by a schedule alone
            write_published(out, record.learner, {"commit": status.sha, "failed": str(error)})
        return Outcome(status, record.learner, str(error), failed=True)
    when = datetime.now(UTC).isoformat(timespec="seconds")
    fields = {"commit": status.sha, "state": status.state, "description": status.description}
    ledger = {**fields, "context": status.context, "sent_at": when}
    if options.comment:
        ledger["comments"] = comments
    write_published(out, record.learner, ledger)
    said = "sent" + (f", {len(comments)} pull request comment(s)" if options.comment else "")
    return Outcome(status, record.learner, said)


def _repository_problem(
    record: store.LearnerRecord, repo: Repository | None, out: Path, roster: Path
) -> str:
    if repo is None:
        return NOT_IN_ROSTER.format(learner=record.learner, out=out, roster=roster)
    return repo.error


def _titles(config: CourseConfig) -> list[tuple[str, str]]:
    from autograder.gradebook.class_output import class_components

    return [(part.name, part.title) for part in class_components(config)]


def _print_requests(
    config: CourseConfig,
    planned: list[tuple[store.LearnerRecord, Repository | None, Status | None]],
    env: Mapping[str, str],
    options: Options,
) -> None:
    """--dry-run: each request publish would send, without the token."""
    base = (env.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/")
    shown, no_commit = 0, []
    for record, repo, status in planned:
        if status is None:
            no_commit.append(record.learner)
            continue
        if repo is None or repo.error:
            print(f"{record.learner}: {repo.error if repo else 'not in the roster'}")
            continue
        shown += 1
        if options.statuses:
            print(f"POST {base}{status.path} {json.dumps(status.payload(), ensure_ascii=False)}")
        if options.comment and status.state != "error":
            print(
                f"Comment on each open pull request of {status.repository} whose head is "
                f"{status.sha}:"
            )
            body = comment_body(record, status, config.course.name, _titles(config))
            print("".join(f"    {line}\n" for line in body.splitlines()), end="")
    line = DRY_RUN_DONE.format(shown=shown, total=len(planned), above=" above" if shown else "")
    if no_commit:
        have = "has" if len(no_commit) == 1 else "have"
        line += DRY_RUN_NO_COMMIT.format(count=len(no_commit), have=have, who=", ".join(no_commit))
    print(line)


def _print_table(config: CourseConfig, outcomes: list[Outcome]) -> None:
    console = Console(highlight=False, soft_wrap=True)
    shown = [o for o in outcomes if o.result and o.result != "unchanged"]
    if shown:
        table = Table(title=f"{config.course.name}: commit statuses", title_justify="left")
        for column in ("Learner", "Repository", "Commit", "State", "Result"):
            table.add_column(column, overflow="fold")
        for o in shown:
            status = o.status
            cells = (
                o.learner,
                status.repository if status else "",
                status.sha[:12] if status else "",
                status.state if status else "",
                "failed (below)" if o.failed else o.result,
            )
            table.add_row(*(Text(cell) for cell in cells))  # GitHub's words: no markup
        console.print(table)
    for o in outcomes:  # whole sentences, one line each: a log is searched for them
        if o.failed:
            print(f"{o.learner}: {o.result}", flush=True)
    failed = sum(o.failed for o in outcomes)
    unchanged = sum(o.result == "unchanged" for o in outcomes)
    skipped = sum(o.status is None for o in outcomes)
    sent = len(outcomes) - failed - unchanged - skipped
    line = SUMMARY.format(sent=sent, unchanged=unchanged, failed=failed, skipped=skipped)
    console.print(line, markup=False)


def _error(sentence: str) -> int:
    print(sentence, file=sys.stderr)
    return _EXIT_BAD
