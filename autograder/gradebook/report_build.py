"""The class report's content (report_model.ClassReport) from a class output folder.

Built only from the per-learner folders (record.json and results.json), DIR/run.json and, when
`autograder similarity` has run, DIR/similarity.csv, so a merged set of shards reports exactly
like one run.

The components are course.toml's and the course's notebook assignments (`notebook`, see
docs/instructor/notebook.md). A notebook is graded only for learners whose repository holds it:
its mean and pass rate count those learners, and a note says how many of the graded learners
they are; its hand-graded column gives its own sentence (Component.absent).
"""

from __future__ import annotations

import statistics
from pathlib import Path

from autograder.copies.similarity_file import class_similarity
from autograder.gradebook import report_tests
from autograder.gradebook.report_model import (
    DEADLINE_NOTE,
    DEADLINE_WINDOW_NOTE,
    EXTENSION_NOTE,
    LATE_NOTE,
    MISSING_SHARDS,
    NOT_GRADED,
    NOT_GRADED_YET,
    NOTHING_SUBMITTED,
    SHARD_NOTE,
    STALE_COPIES,
    TOP_FAILURES,
    UNFINISHED_SHARDS,
    ClassReport,
    Component,
    FailureRow,
    LearnerRow,
    who_text,
)
from autograder.gradebook.store import RECORD_FILE, LearnerRecord, learner_dir, read_run
from autograder.points_text import points


def build_report(
    out: Path,
    records: list[LearnerRecord],
    components: list[Component],
    course: str,
    note: str = "",
) -> ClassReport:
    """What the class report shows (``note``: a sentence said before all others)."""
    graded = [r for r in records if not r.failed]
    components = submitted_components(graded, components)
    counted = report_tests.tally(out, graded)
    notes = _run_notes(out, records, graded)
    when = report_tests.graded_when(graded, counted.how)
    notes[:0] = [line for line in (note, when) if line]
    similarity = class_similarity(out)
    report = ClassReport(
        course=course,
        learners=len(records),
        graded=len(graded),
        totals=[r.total or 0.0 for r in graded],
        max_score=sum(c.points for c in components),
        components=[],
        tests=counted.pass_rates(),
        failures=[],
        errored=[(r.learner, r.error) for r in records if r.grading_error],
        nothing_submitted=[(r.learner, r.error) for r in records if r.nothing_submitted],
        tampered=[(r.learner, "; ".join(r.tamper)) for r in records if r.tamper],
        review=[(r.learner, "; ".join(r.review)) for r in records if r.review],
        notes=notes,
        not_graded_yet=[(r.learner, r.error) for r in records if r.pending],
        columns=[(c.title, c.points) for c in components],
        similarity_note=similarity.note,
        similarity_page=similarity.page,
        tamper_checked=_tamper_checked(out),
    )
    _add_components(report, graded, components)
    stale = [r.learner for r in graded if r.note]
    if stale:
        report.notes.append(STALE_COPIES.format(learners=", ".join(stale)))
    _add_failures(report, counted, components)
    cells = similarity.cells
    report.rows = [
        learner_row(out, r, components, cells.get(r.learner, ""))
        for r in sorted(records, key=lambda r: r.learner)
    ]
    return report


def _add_components(
    report: ClassReport, graded: list[LearnerRecord], components: list[Component]
) -> None:
    """Per component: mean, full marks, the scores for its figure; a note for an optional
    component only some learners have."""
    for c in components:
        scores = component_scores(graded, c)
        full = sum(1 for s in scores if s >= c.points - 1e-9)
        mean = statistics.fmean(scores) if scores else 0.0
        report.components.append((c.title, mean, c.points, full, len(scores)))
        report.scores.append((c.title, c.points, scores))
        if c.optional and len(scores) < len(graded):
            report.notes.append(
                c.absent.format(title=c.title, have=len(scores), graded=len(graded))
            )


def _add_failures(
    report: ClassReport, counted: report_tests.Tally, components: list[Component]
) -> None:
    """Known mistakes (every one), the most common other messages and the not-implemented
    components, most learners first, then in course order."""
    titles = {c.name: c.title for c in components}
    order = {c.name: i for i, c in enumerate(components)}
    common = sorted(
        counted.failures.items(),
        key=lambda item: (-item[1], order.get(item[0][0], len(order)), item[0]),
    )
    rows = [
        FailureRow(count, titles.get(key[0], key[0]), key[1], key[2], tuple(counted.who[key]))
        for key, count in common
    ]
    others = [r for r in rows if not r.mistake]
    report.failures, report.other_failures = others[:TOP_FAILURES], len(others)
    report.mistakes = [r for r in rows if r.mistake]
    report.not_implemented = [
        (titles.get(c, c), tuple(who))
        for c, who in sorted(
            counted.stubs.items(), key=lambda i: (order.get(i[0], len(order)), i[0])
        )
    ]


def _run_notes(out: Path, records: list[LearnerRecord], graded: list[LearnerRecord]) -> list[str]:
    """The sentences about the run: the deadline and the late policy, the shards."""
    notes: list[str] = []
    deadlines = _deadlines(records)
    if deadlines:
        later = sum(1 for r in graded if r.late)
        judged = any(r.late_days is not None for r in graded)
        template = DEADLINE_WINDOW_NOTE if judged else DEADLINE_NOTE
        notes.append(template.format(deadline=" and ".join(deadlines), later=later))
    notes += _late_notes(out, graded)
    run = read_run(out)
    if run and run["shard"]:
        notes.append(SHARD_NOTE.format(shard=run["shard"]))
    if run and run["incomplete"]:
        notes.append(UNFINISHED_SHARDS.format(shards=", ".join(run["incomplete"])))
    missing = missing_shards(run["merged"]) if run else ""  # merge.py lists the shards
    if missing:
        notes.append(missing)
    return notes


def _tamper_checked(out: Path) -> bool:
    """Whether DIR/run.json says the class was graded with --manifest (True when it does not
    say: a folder from before run.json kept the options)."""
    run = read_run(out)
    options = run.get("options") if run else None
    if not isinstance(options, dict) or "--manifest" not in options:
        return True
    return bool(options["--manifest"])


def _late_notes(out: Path, graded: list[LearnerRecord]) -> list[str]:
    """LATE_NOTE when the late policy judged the commits, EXTENSION_NOTE when only extensions
    applied; the policy's percent and days as a late learner's results.json names them."""
    judged = [r for r in graded if r.late_days is not None]
    if not judged:
        return []
    extended = who_text(tuple(r.learner for r in judged if r.extension_days)) or "none"
    policy = next(filter(None, (_policy(out, r) for r in judged if r.raw_total is not None)), None)
    if policy is None:
        return [EXTENSION_NOTE.format(extended=extended)]
    late = [r for r in judged if r.late_days]
    percent, max_days = policy
    return [
        LATE_NOTE.format(
            max_days="1 day" if max_days == 1 else f"{max_days} days",
            percent=f"{percent:g}",
            late="1 learner" if len(late) == 1 else f"{len(late)} learners",
            points=points(sum(r.late_penalty or 0.0 for r in late)),
            extended=extended,
        )
    ]


def _policy(out: Path, record: LearnerRecord) -> tuple[float, int] | None:
    """(percent per day, max days) of the late policy that judged the record, from its
    results.json (extra_data.graded_commit.late); None when it does not say."""
    extra = report_tests.read_results(out, record.learner).get("extra_data")
    graded = extra.get("graded_commit") if isinstance(extra, dict) else None
    late = graded.get("late") if isinstance(graded, dict) else None
    if not isinstance(late, dict) or not isinstance(late.get("max_days"), int):
        return None
    percent = late.get("penalty_per_day")
    if not late["max_days"] or not isinstance(percent, int | float):
        return None
    return float(percent), late["max_days"]


def _deadlines(records: list[LearnerRecord]) -> list[str]:
    """The records' deadlines, each instant once (merged shards may write one otherwise)."""
    from autograder.gradebook.snapshot import parse_deadline

    shown: dict[object, str] = {}
    for deadline in sorted({r.deadline for r in records if r.deadline}):
        try:
            moment: object = parse_deadline(deadline)
        except ValueError:
            moment = deadline  # not a deadline grade-class wrote: shown as it is
        shown.setdefault(moment, deadline)
    return list(shown.values())


def learner_row(
    out: Path, record: LearnerRecord, components: list[Component], similarity: str = ""
) -> LearnerRow:
    """The record's row of the Learners table (``similarity``: its cell, "" without one)."""
    graded = not record.failed and record.total is not None
    total = NOT_GRADED
    if graded:
        total = points(record.total)
        total += f" / {points(record.max_score)}" if record.max_score is not None else ""
    elif record.pending:
        total = NOT_GRADED_YET
    elif record.nothing_submitted:
        total = NOTHING_SUBMITTED
    judged = graded and record.late_days is not None
    return LearnerRow(
        learner=record.learner,
        scores=tuple(_score(record, c) if graded else "" for c in components),
        total=total,
        late="" if record.late is None else ("yes" if record.late else "no"),
        extension=str(record.extension_days) if judged else "",
        days_late=str(record.late_days) if judged else "",
        penalty=points(record.late_penalty) if judged and record.late_penalty is not None else "",
        similarity=similarity,
        linked=(learner_dir(out, record.learner) / RECORD_FILE).is_file(),
    )


def _score(record: LearnerRecord, component: Component) -> str:
    value = record.components.get(component.name)
    if value is None:
        return "" if component.optional else points(0.0)
    return points(value)


def submitted_components(
    graded: list[LearnerRecord], components: list[Component]
) -> list[Component]:
    """The components to report: every course component, and an optional one (a notebook) only
    when some graded learner has it, so that a class without notebooks is out of 100, not 120."""
    return [c for c in components if not c.optional or component_scores(graded, c)]


def component_scores(graded: list[LearnerRecord], component: Component) -> list[float]:
    """The component's score of each graded learner; an optional component (a notebook) only
    of the learners that have it, a course component 0 when a record lacks it."""
    if component.optional:
        return [r.components[component.name] for r in graded if component.name in r.components]
    return [r.components.get(component.name, 0.0) for r in graded]


def missing_shards(merged: list[str]) -> str:
    """MISSING_SHARDS when the shards merged ("i/n" each, from their DIR/run.json) are not
    every shard of the run; "" otherwise."""
    shards = {tuple(map(int, shard.split("/"))) for shard in merged if shard}
    counts = {count for _, count in shards}
    if len(counts) != 1:
        return ""
    (count,) = counts
    have = sorted(index for index, _ in shards)
    missing = [index for index in range(1, count + 1) if index not in have]
    if not missing:
        return ""
    have_text = ("shard " if len(have) == 1 else "shards ") + ", ".join(map(str, have))
    return MISSING_SHARDS.format(
        have=have_text if have else "no shard", count=count, missing=", ".join(map(str, missing))
    )
