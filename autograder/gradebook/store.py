"""Per-learner records on disk and the gradebook CSV rebuilt from them.

Layout of a class output folder DIR:

    DIR/<learner>/record.json   the gradebook row (written last, inside the folder)
    DIR/<learner>/results.json  summary.md, junit.xml, grader.log: the learner's reports
    DIR/.partial/               folders being written; never read, cleared at every start
    DIR/.pycache/               compiled grader modules of the learners' runs (grading/bytecode.py)
    DIR/.lock                   held by the command writing DIR (lock.py); names it
    DIR/.repos/<learner>.git    the copy of a repository the roster gives by URL (fetch.py)
    DIR/.forced                 when a --force run began; gone once one grades everyone
    DIR/run.json                the run's shard and settings digest (merge.py reads it)
    DIR/gradebook.csv           rebuilt from every DIR/*/record.json, sorted by learner id

A learner's folder is built complete in DIR/.partial and renamed into place, so a learner is
either fully done (record.json present) or not there at all, whatever kills the run. The CSV
depends only on the records, so a resumed run and an uninterrupted one write the same bytes,
apart from the timing columns (TIMING_COLUMNS).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from autograder.atomic_files import atomic_write_text
from autograder.gradebook.late import LATE_COLUMNS, PENALTY_COLUMNS, late_cells
from autograder.gradebook.roster import RosterError, parse_shard
from autograder.learner_text import csv_text
from autograder.points_text import points

RECORD_FILE = "record.json"
GRADEBOOK_FILE = "gradebook.csv"
PARTIAL_DIR = ".partial"
FORCED_FILE = ".forced"
RUN_FILE = "run.json"  # not hidden: CI artifact uploads leave out dot files (regrade.yml)
OLD_RUN_FILE = ".run.json"  # where versions of 2026-12-01 wrote it
TIMING_COLUMNS = ("duration_s", "graded_at")
#: The error of a row given to a learner without a record: a sentence formatted with
#: {learner}, or a function of the learner's id that gives it.
Ungraded = str | Callable[[str], str]


@dataclass
class LearnerRecord:
    """One gradebook row. `components` maps component name to score; empty when ungraded."""

    learner: str
    commit: str = ""
    commit_time: str = ""
    late: bool | None = None
    deadline: str = ""  # --deadline as given ("" without): late says commits after it exist
    components: dict[str, float] = field(default_factory=dict)
    total: float | None = None
    max_score: float | None = None
    tamper: list[str] = field(default_factory=list)
    #: the static check's flags for the instructor's review: "file line N: what ..." (no points)
    review: list[str] = field(default_factory=list)
    error: str = ""
    duration_s: float = 0.0
    graded_at: str = ""
    key: str = ""  # the settings it was graded with (job.settings_key); resume reuses matches
    run_id: str = ""  # the batch run that wrote it
    settings: str = ""  # job.run_settings: what every learner of that run shares
    shard: str = ""  # "i/n" when graded by grade-class --shard i/n
    note: str = ""  # graded from a copy that could not be updated (fetch.py): why
    # The error says the learner gave nothing to grade (snapshot.NothingSubmitted), not that
    # grading broke: the class report lists such learners apart
    nothing_submitted: bool = False
    # A roster learner the run stopped before grading: a gradebook row only, never saved
    pending: bool = False
    # An extension or the late policy applied (gradebook/late.py): the roster's extension, the
    # days the graded commit was late, the penalty in points and the total before it
    extension_days: int = 0
    late_days: int | None = None
    late_penalty: float | None = None
    raw_total: float | None = None

    @property
    def failed(self) -> bool:
        """The learner got no grade (the row carries an error instead)."""
        return bool(self.error)

    @property
    def grading_error(self) -> bool:
        """No grade because grading could not be done: not a learner who gave nothing to grade,
        nor one not graded yet (what the progress bar counts and the report lists as errored)."""
        return self.failed and not self.pending and not self.nothing_submitted

    def to_json(self) -> str:
        fields = asdict(self)
        del fields["pending"]  # a pending row is never saved: record.json keeps its keys
        return json.dumps(fields, indent=2, ensure_ascii=False, allow_nan=False) + "\n"

    @classmethod
    def from_json(cls, text: str) -> LearnerRecord:
        return cls(**json.loads(text))


def learner_dir(out: Path, learner: str) -> Path:
    return Path(out) / learner


def read_record(out: Path, learner: str) -> LearnerRecord | None:
    """The learner's finished record, or None when they are not done (or it is unreadable, or
    it is another learner's: a copy of a learner's folder under another name, amara.bak, is
    no row of its own; H48 got two rows for amara and a class one larger than its roster)."""
    path = learner_dir(out, learner) / RECORD_FILE
    try:
        record = LearnerRecord.from_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError):
        return None
    return record if record.learner == learner else None


def read_records(out: Path) -> list[LearnerRecord]:
    """Every finished record in out, sorted by learner id."""
    records = []
    for child in sorted(Path(out).iterdir()) if Path(out).is_dir() else []:
        if child.is_dir() and not child.name.startswith("."):
            record = read_record(out, child.name)
            if record is not None:
                records.append(record)
    return sorted(records, key=lambda r: r.learner)


def staging_dir(out: Path, learner: str) -> Path:
    """A fresh folder in DIR/.partial to build a learner's folder in."""
    folder = Path(out) / PARTIAL_DIR / f"{learner}.{uuid.uuid4().hex[:8]}"
    folder.mkdir(parents=True)
    return folder


def trash_dir(out: Path, learner: str) -> Path:
    """Where a learner's previous folder goes while it is replaced (DIR/.partial, deleted at
    once). Its name starts with "-", as no learner id does (roster.ID_PATTERN), so that the
    progress bar never takes it for a learner in progress: "old-kofi.<hex>" read as learner
    "old-kofi"."""
    return Path(out) / PARTIAL_DIR / f"-old-{learner}.{uuid.uuid4().hex[:8]}"


FOREIGN = (
    "{out} already holds {names}, which the grader did not write (not a learner folder with "
    "its record.json): a learner's own repository, say. The command would replace {them}; "
    "choose another --out."
)


def foreign(out: Path, learners: list[str]) -> str:
    """FOREIGN naming what stands at DIR/<learner> for these learners and is not a learner
    folder this package wrote (each has record.json: it is renamed into place whole), nor an
    empty folder, and DIR/run.json when it is no file; "" when there is none. H36 lost two
    repositories: a CSV roster beside them, `--out .`, and each learner's repository was
    replaced by their reports."""
    names = []
    for learner in learners:
        path = learner_dir(out, learner)
        if not (path.exists() or path.is_symlink()):
            continue
        folder = path.is_dir() and not path.is_symlink()
        # Ours: its record names this learner and no repository is inside (H37: a learner's
        # repository with a file record.json of its own was taken for ours and replaced).
        record = read_record(out, learner) if folder else None
        ours = record is not None and record.learner == learner and not (path / ".git").exists()
        if not (ours or (folder and not any(path.iterdir()))):
            names.append(learner)
    run_file = Path(out) / RUN_FILE
    if run_file.exists() and not run_file.is_file():  # a learner of a version that allowed it
        names.append(RUN_FILE)
    if not names:
        return ""
    return FOREIGN.format(out=out, names=", ".join(names), them="it" if len(names) == 1 else "them")


def commit_learner(out: Path, staged: Path, record: LearnerRecord) -> Path:
    """Write the record into the staged folder and move it to DIR/<learner>, replacing any
    previous one. The old folder is moved aside first, then deleted. Raises FileExistsError
    (FOREIGN) instead of replacing anything that is not a learner folder (see ``foreign``)."""
    atomic_write_text(staged / RECORD_FILE, record.to_json())
    final = learner_dir(out, record.learner)
    refusal = foreign(out, [record.learner])
    if refusal:
        raise FileExistsError(refusal)
    if final.exists():
        trash = trash_dir(out, record.learner)
        os.replace(final, trash)
        shutil.rmtree(trash, ignore_errors=True)
    os.replace(staged, final)
    return final


def forced_since(out: Path) -> str:
    """When an unfinished --force run began (ISO 8601, UTC), or "": a record graded before
    then is one that run meant to grade again, so a rerun without --force grades it."""
    try:
        return (Path(out) / FORCED_FILE).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return ""


def mark_forced(out: Path, since: str) -> None:
    atomic_write_text(Path(out) / FORCED_FILE, since + "\n")


def clear_forced(out: Path) -> None:
    (Path(out) / FORCED_FILE).unlink(missing_ok=True)


def write_run(
    out: Path,
    shard: str,
    settings: str,
    merged: list[str] | None = None,
    *,
    roster: str = "",
    complete: bool = True,
    incomplete: list[str] | None = None,
    learners: list[str] | None = None,
    same_as: str = "",
    options: dict[str, str] | None = None,
    everyone: list[str] | None = None,
) -> None:
    """DIR/run.json: which shard of the roster DIR holds ("i/n", "" for all), the run's
    settings digest (job.run_settings), ``roster`` a digest of the whole roster's learner ids
    (roster_digest), ``complete`` whether the run graded every learner of its shard (False
    from its start until it has), ``learners`` the ids it grades (merge takes no other
    learner's folder from DIR: one an earlier run of another roster left); for a merge's
    output, the shards it merged and those of them that were not complete (their "i/n", or
    the folder of one that is no shard); ``same_as`` the settings digest with the deadline as
    an instant (job.instant_settings); ``options`` the settings as given, by option
    (job.shared_options); ``everyone`` the whole roster's ids, for a shard (merge gives the
    learners of a shard it was not given a row each). What merge.py compares, also for a shard
    that holds no learner."""
    run = {
        "shard": shard,
        "settings": settings,
        "roster": roster,
        "complete": complete,
        "merged": merged or [],
        "incomplete": incomplete or [],
        "learners": learners or [],
        "same_as": same_as,
        "options": options or {},
        "everyone": everyone or [],
    }
    atomic_write_text(Path(out) / RUN_FILE, json.dumps(run) + "\n")
    (Path(out) / OLD_RUN_FILE).unlink(missing_ok=True)


def roster_digest(learners: list[str]) -> str:
    """Which roster a run graded: a digest of all its learner ids (before --shard)."""
    return hashlib.sha256("\n".join(sorted(learners)).encode("utf-8")).hexdigest()[:16]


def read_run(out: Path) -> dict | None:
    """DIR/run.json (or the .run.json of the versions before it), or None (a folder of an older
    version, or not a grade-class output). Fields an older version did not write read as
    unknown: roster "", complete True."""
    path = Path(out) / RUN_FILE
    if not path.is_file() and (Path(out) / OLD_RUN_FILE).is_file():
        path = Path(out) / OLD_RUN_FILE  # also where an older run's learner is named run.json
    try:
        run = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(run, dict):
        return None
    return {
        "shard": shard_label(run.get("shard", "")),
        "settings": str(run.get("settings", "")),
        "roster": str(run.get("roster", "")),
        "complete": run.get("complete", True) is not False,
        "merged": _shards(run.get("merged", [])),
        "incomplete": _strings(run.get("incomplete", [])),
        "learners": _strings(run.get("learners", [])),
        "same_as": str(run.get("same_as", "")),
        "options": _options(run.get("options")),
        "everyone": _strings(run.get("everyone", [])),
    }


def _options(values: object) -> dict[str, str]:
    if not isinstance(values, dict):
        return {}
    return {str(name): str(value) for name, value in values.items()}


def _strings(values: object) -> list[str]:
    return [str(v) for v in values] if isinstance(values, list) else []


def _shards(values: object) -> list[str]:
    return [shard_label(v) for v in values if shard_label(v)] if isinstance(values, list) else []


def shard_label(value: object) -> str:
    """An "i/n" shard as grade-class --shard writes it (roster.parse_shard), else "" (H35: a
    hand-made run.json of "a/b" crashed merge)."""
    try:
        selection = parse_shard(str(value))
    except RosterError:
        return ""
    return f"{selection[0]}/{selection[1]}" if selection else ""


def clear_partial(out: Path) -> None:
    """Remove what an interrupted run left half-written."""
    shutil.rmtree(Path(out) / PARTIAL_DIR, ignore_errors=True)


def gradebook_columns(components: list[str], late: bool = False) -> list[str]:
    """The header; ``late``: with LATE_COLUMNS after late and PENALTY_COLUMNS before total."""
    return [
        "learner",
        "commit",
        "commit_time",
        "late",
        *(LATE_COLUMNS if late else ()),
        *components,
        *(PENALTY_COLUMNS if late else ()),
        "total",
        "max_score",
        "tamper",
        "review",
        "errors",
        *TIMING_COLUMNS,
    ]


def render_gradebook(records: list[LearnerRecord], components: list[str]) -> str:
    """The CSV text: one row per record in learner order; scores with 2 decimals. The late
    policy's columns only when a row has them (an extension or the policy applied). A text
    cell that a spreadsheet would run as a formula starts with a single quote (csv_text)."""
    late = any(r.late_days is not None for r in records)
    rows = [
        [
            r.learner,
            r.commit,
            r.commit_time,
            "" if r.late is None else ("yes" if r.late else "no"),
            *(late_cells(r) if late else ()),
            *[_score(r.components.get(name)) for name in components],
            *((_score(r.raw_total), _score(r.late_penalty)) if late else ()),
            _score(r.total),
            _score(r.max_score),
            "; ".join(r.tamper),
            "; ".join(r.review),
            r.error,
            f"{r.duration_s:.1f}" if r.graded_at else "",  # a row not graded yet: no time
            r.graded_at,
        ]
        for r in sorted(records, key=lambda r: r.learner)
    ]
    return csv_text([gradebook_columns(components, late), *rows])


def write_gradebook(
    out: Path,
    components: list[str],
    learners: list[str] | None = None,
    *,
    ungraded: Ungraded = "",
    adjust: Callable[[LearnerRecord], LearnerRecord] | None = None,
) -> list[LearnerRecord]:
    """Rebuild DIR/gradebook.csv from the records in DIR (only those of `learners` when
    given); return the records it holds. With ``ungraded`` (a sentence formatted with
    {learner}), each of `learners` without a record gets a row whose error it is. ``adjust``:
    applied to each record first (the scores graded by hand, notebook/hand_grades.py)."""
    records = read_records(out)
    if adjust is not None:
        records = [adjust(record) for record in records]
    if learners is not None:
        wanted = set(learners)
        records = [r for r in records if r.learner in wanted]
        if ungraded:
            have = {r.learner for r in records}
            records += [
                LearnerRecord(learner, error=_ungraded(ungraded, learner), pending=True)
                for learner in sorted(wanted - have)
            ]
            records.sort(key=lambda r: r.learner)
    atomic_write_text(Path(out) / GRADEBOOK_FILE, render_gradebook(records, components))
    return records


def _ungraded(ungraded: Ungraded, learner: str) -> str:
    return ungraded(learner) if callable(ungraded) else ungraded.format(learner=learner)


def _score(value: float | None) -> str:
    return "" if value is None else points(value)
