"""A rerun with other settings must not replace a class's grades by accident (H47).

The grades in DIR were made with one deadline, time limit, seed and manifest. A rerun that
gives another deadline (or forgets it) would grade every learner again and overwrite the
authoritative gradebook, even with --regrade, and even when the sentence of a learner's error
row suggested that rerun. So grade-class refuses such a run unless --force says that everyone
is to be graded again with the new settings; `refusal` is its sentence, naming what differs.

The options as given are kept in DIR/run.json (store.write_run's ``options``) from this version
on; the records of an older version hold only a digest of them, and their deadline.
"""

from __future__ import annotations

from collections.abc import Iterable

from autograder.gradebook import late, snapshot, store
from autograder.gradebook.contents import COURSE_PARTS
from autograder.gradebook.settings import JobSettings, run_settings, settings_key, shared_options

REFUSED = (
    "{out} holds the rows of {learners} made with other settings ({differences}); this "
    "run would grade them again and replace those rows. Run the command with the same "
    "settings to go on, add --force to grade everyone again with these, or give another --out."
)
UNNAMED = "another --timeout, --seed, --manifest or course, or an earlier version of the autograder"
NOT_GIVEN = {"--deadline": "none", "--timeout": "the course's", "--manifest": "none"}


def refusal(
    records: Iterable[store.LearnerRecord | None],
    settings: JobSettings,
    *,
    forced: str,
    run: dict | None,
) -> str:
    """The sentence refusing this run, or "" when no kept grade was made with other settings.
    ``forced``: when an unfinished --force run began (its older records are graded again
    anyway); ``run``: DIR/run.json as store.read_run gives it (None: none)."""
    mine = run_settings(settings)
    other = [
        r
        for r in records
        if r is not None and r.settings and r.settings != mine and not r.graded_at < forced
    ]
    if not other:
        return ""
    count = "1 learner" if len(other) == 1 else f"{len(other)} learners"
    return REFUSED.format(
        out=settings.out, learners=count, differences=_differences(other, settings, run)
    )


def _differences(other: list[store.LearnerRecord], settings: JobSettings, run: dict | None) -> str:
    """'--deadline A there, none here; --seed 0 there, 7 here': what differs, as far as DIR
    says."""
    new = shared_options(settings)
    old = (run or {}).get("options") or {}
    if old and {r.settings for r in other} == {(run or {}).get("settings")}:
        return differences(old, new, "there", "here") or UNNAMED
    # an older version's folder: only the records' deadline is known
    changed = ["--deadline"] if _deadlines_differ(other, settings.deadline) else []
    old = {"--deadline": sorted({r.deadline for r in other})[0]}
    return described(changed, old, new) or UNNAMED


def differences(old: dict[str, str], new: dict[str, str], there: str, here: str) -> str:
    """What differs between two runs' options as run.json keeps them ("" when they agree or
    one of them is not known): for merge's refusal of shards graded otherwise (``there`` and
    ``here`` name where each comes from)."""
    if not old or not new:
        return ""
    changed = [name for name in new if old.get(name, "") != new[name]]
    return described(changed, old, new, there=there, here=here)


def described(
    changed: list[str],
    old: dict[str, str],
    new: dict[str, str],
    *,
    there: str = "there",
    here: str = "here",
) -> str:
    """'--seed 0 there, 7 here; the course's graders changed' for the ``changed`` options."""
    if not changed:
        return ""
    parts = [name for name in changed if name in COURSE_PARTS]
    said = [
        f"{n} {_shown(n, old.get(n, ''))} {there}, {_shown(n, new[n])} {here}"
        for n in changed
        if n not in COURSE_PARTS and n != "--course"
    ]
    if parts:
        said.append(f"the course's {_and(parts)} {'differs' if len(parts) == 1 else 'differ'}")
    elif "--course" in changed:
        said.append(f"--course {old.get('--course', '')} {there}, {new['--course']} {here}")
    return "; ".join(said)


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _deadlines_differ(records: list[store.LearnerRecord], deadline: str | None) -> bool:
    instants = {_instant(r.deadline) for r in records}
    return instants != {_instant(deadline or "")}


def _instant(deadline: str) -> object:
    try:
        return snapshot.parse_deadline(deadline) if deadline else None
    except ValueError:
        return deadline  # a damaged record: compared as written


def _shown(name: str, value: str) -> str:
    return value if value not in ("", "None") else NOT_GIVEN.get(name, "none")


OTHER_REPOSITORY = (
    "{learners} a result in {out} graded from another repository path or clone URL than the "
    "roster gives now; grading them again."
)


def roster_changes(
    pending: list, records: dict, same: dict, settings: JobSettings, out: object
) -> list[str]:
    """The sentences for the pending learners (roster.Learner) whose record (records: id ->
    store.LearnerRecord or None) was graded with the ``same`` settings but from another
    repository (OTHER_REPOSITORY) or with another extension (late.EXTENSION_CHANGED). A record
    without a key (its grading could not finish) is retried, and not counted."""
    moved = sum(
        bool(records[lr.id] and records[lr.id].key)
        and records[lr.id].settings == same
        and records[lr.id].key != settings_key(settings, lr)
        and records[lr.id].extension_days == lr.extension_days
        for lr in pending
    )
    who = "1 learner has" if moved == 1 else f"{moved} learners have"
    said = [OTHER_REPOSITORY.format(learners=who, out=out)] if moved else []
    extended = late.changed_extensions(pending, records, out)
    return said + ([extended] if extended else [])
