"""Whether grade-class may grade a class at this machine's isolation level, and what it says.

At ``process-group`` (runtime/harness/isolation.py: neither root nor allowed to create user
namespaces) learner code reads whatever the grader's user can read: another learner's record
in --out, and every secret in the grader's environment (``/proc/<pid>/environ``). A CI job is
where that matters most and is seen least: an instructor's workflow holds a token for every
learner's repository, and nobody reads its log.

So in CI (``GITHUB_ACTIONS`` or ``CI`` true, as GitHub Actions, GitLab CI and most others set)
grade-class refuses that level unless --allow-unconfined; elsewhere it grades, and says once
on stderr that learner code runs unconfined (not only in each grader.log).

The learner's own `autograder grade` of their own repository is not concerned: the code it
runs is the learner's, in the learner's job.

Design: docs/operations/security.md#what-a-ci-job-needs.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping

from autograder.runtime.harness.isolation import PROCESS_GROUP, probe

REFUSED_IN_CI = (
    "Refusing to grade the class: this CI machine only allows the weakest isolation level, "
    "process-group (the grader could create namespaces neither as root nor in a user "
    "namespace), where each learner's code can read every secret in this job's environment "
    "and the other learners' results in --out; run grade-class as root (sudo), or first let "
    "unprivileged users create user namespaces (on Ubuntu 24.04: sudo sysctl -w "
    "kernel.apparmor_restrict_unprivileged_userns=0), or pass --allow-unconfined to grade "
    "unconfined anyway."
)
UNCONFINED_NOTE = (
    "Learner code runs unconfined on this machine (isolation level process-group): it can read "
    "whatever your user can read, other learners' results in --out included; run grade-class "
    "as root, or let unprivileged users create user namespaces, to confine it."
)
#: Values of CI / GITHUB_ACTIONS that mean "this is a CI job" (GitHub and GitLab set "true").
_TRUE = frozenset({"true", "1", "yes"})


def in_ci(env: Mapping[str, str]) -> bool:
    """Whether ``env`` is a CI job's: GITHUB_ACTIONS or CI set to true (or 1, yes)."""
    return any(env.get(name, "").strip().lower() in _TRUE for name in ("GITHUB_ACTIONS", "CI"))


def check(env: Mapping[str, str], *, allowed: bool, level: str | None = None) -> tuple[str, str]:
    """(refusal, note) for grading a class at ``level`` (default: this machine's, probe()).

    refusal: REFUSED_IN_CI when the level is process-group in CI without --allow-unconfined
    (``allowed``), else "". note: UNCONFINED_NOTE, for stderr, when the run grades at
    process-group, else ""."""
    level = probe()[0] if level is None else level
    if level != PROCESS_GROUP:
        return "", ""
    if in_ci(env) and not allowed:
        return REFUSED_IN_CI, ""
    return "", UNCONFINED_NOTE


def refuse_or_say(env: Mapping[str, str], *, allowed: bool) -> str:
    """check() at this machine's level: the refusal, or "" after the note (if any) is said on
    stderr, once per command and even with --quiet: not only in each learner's grader.log."""
    refusal, note = check(env, allowed=allowed)
    if note:
        print(note, file=sys.stderr)
    return refusal
