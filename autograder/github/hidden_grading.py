"""The steps of the scheduled hidden grading that need no grader installed.

The steps of the scheduled hidden grading (.github/workflows/hidden-grading.yml) that need
no grader installed: ``python -m autograder.github.hidden_grading restore|plan|save``.

They import only the standard library and the gradebook's own modules, so the workflow's plan
job runs them from the checkout without installing torch: a scheduled run that finds nothing
new costs a minute.

* ``restore BRANCH DIR``: the last gradebook (gradebook_branch.restore); writes ``base=<commit>``
  to $GITHUB_OUTPUT.
* ``plan ROSTER DIR``: which learners to grade (no row yet, a row to retry, or a repository
  that moved on: gradebook/remote_heads.py) and which rows publish has not handled
  (published.py); writes ``grade``, ``publish``, ``shards`` (a JSON list 1..N for the matrix)
  and ``shard_count``: N = ceil(grade / --per-shard), at most --max-shards.
* ``save BRANCH DIR --base COMMIT``: the new gradebook on the branch (gradebook_branch.save).

Exit status: 0 done; 2 a step failed (one sentence on stderr).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from autograder.github import gradebook_branch
from autograder.github.published import unpublished
from autograder.gradebook import remote_heads, store
from autograder.gradebook.roster import RosterError, read_roster

PLANNED = (
    "{grade} of {total} learners to grade ({new} without a row, {moved} whose repository moved "
    "on), on {shards} machine(s); {publish} graded rows not published yet."
)
RESTORED = "Restored the gradebook of {branch} at {commit}."
FIRST_RUN = "The branch {branch} does not exist yet: this run starts a new gradebook."
SAVED = "Saved the gradebook on {branch}: {commit}."
UNCHANGED = "The gradebook did not change; nothing to save."


def plan(
    roster: Path, out: Path, *, per_shard: int, max_shards: int, everyone: bool = False
) -> dict[str, str]:
    """The plan's outputs (see the module docstring), and a line for the log as "said"."""
    learners = read_roster(roster)
    records = {learner.id: store.read_record(out, learner.id) for learner in learners}
    new = {lid for lid, record in records.items() if record is None or not record.key}
    moved = set(remote_heads.moved(learners, records, lambda line: print(line, file=sys.stderr)))
    chosen = {learner.id for learner in learners} if everyone else new | moved
    shards = min(max_shards, math.ceil(len(chosen) / per_shard)) if chosen else 0
    waiting = [lid for lid in unpublished(out) if lid in records and lid not in chosen]
    said = PLANNED.format(
        grade=len(chosen),
        total=len(learners),
        new=len(new),
        moved=len(moved - new),
        shards=shards,
        publish=len(waiting),
    )
    return {
        "grade": str(len(chosen)),
        "publish": str(len(waiting)),
        "shards": json.dumps(list(range(1, shards + 1))),
        "shard_count": str(shards),
        "said": said,
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Run one step; the exit status of the module docstring."""
    args = _parser().parse_args(argv)
    try:
        if args.step == "restore":
            commit = gradebook_branch.restore(args.branch, Path(args.dir))
            print(RESTORED.format(branch=args.branch, commit=commit) if commit else
                  FIRST_RUN.format(branch=args.branch))  # fmt: skip
            _output({"base": commit})
        elif args.step == "plan":
            outputs = plan(
                Path(args.roster),
                Path(args.dir),
                per_shard=args.per_shard,
                max_shards=args.max_shards,
                everyone=args.everyone,
            )
            print(outputs.pop("said"))
            _output(outputs)
        else:
            message = f"Gradebook of run {os.environ.get('GITHUB_RUN_ID', 'by hand')}"
            commit = gradebook_branch.save(
                args.branch, Path(args.dir), base=args.base, message=message
            )
            print(SAVED.format(branch=args.branch, commit=commit) if commit else UNCHANGED)
    except (gradebook_branch.BranchError, RosterError, OSError) as error:
        print(error, file=sys.stderr)
        return 2
    return 0


def _output(values: dict[str, str]) -> None:
    """Append name=value lines to $GITHUB_OUTPUT (nothing outside Actions)."""
    path = os.environ.get("GITHUB_OUTPUT")
    if path:
        with open(path, "a", encoding="utf-8") as stream:
            stream.write("".join(f"{name}={value}\n" for name, value in values.items()))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m autograder.github.hidden_grading")
    steps = parser.add_subparsers(dest="step", required=True)
    restore = steps.add_parser("restore", help="the last gradebook from the branch into DIR")
    restore.add_argument("branch")
    restore.add_argument("dir")
    planned = steps.add_parser("plan", help="who to grade and publish, and on how many shards")
    planned.add_argument("roster")
    planned.add_argument("dir")
    planned.add_argument("--per-shard", type=_positive, default=25, metavar="N")
    planned.add_argument("--max-shards", type=_positive, default=8, metavar="N")
    planned.add_argument("--everyone", action="store_true", help="grade every learner")
    save = steps.add_parser("save", help="DIR as the branch's next commit, pushed")
    save.add_argument("branch")
    save.add_argument("dir")
    save.add_argument("--base", default="", help="the commit restore gave ('' for none)")
    return parser


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text}")
    return value


if __name__ == "__main__":
    raise SystemExit(main())
