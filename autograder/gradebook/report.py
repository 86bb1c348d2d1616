"""The class report: DIR/report.md, DIR/report.html and the score figure.

Built only from the per-learner folders (record.json and results.json), so a merged set of
shards reports exactly like one run. Sections: the score distribution (a matplotlib histogram,
`score_distribution.png`, also embedded in the HTML), pass rate per component (learners with
the component's full points), the known mistakes seen, the most common other failure messages,
the components not implemented yet, errored learners, tamper flags, and last (the longest) the
pass rate per test. Learner text is escaped for Markdown tables and for HTML.

Known mistakes: every catalogued mistake a failing test names (`[attention/no-scale]`, however
many input sizes it was seen at) gets its row, never cut: how many learners, the component, the
full id, the explanation and who (the first WHO_SHOWN learner ids, then how many more), so the
instructor can follow up without opening every learner's results.

Most common failure messages: every other message, its first sentence with numbers and shapes
replaced by `…` (so `Encoder(3, 8, 2, 16)` and `Encoder(4, 12, 3, 20)` are one row, and no value
of a hidden test's inputs or expected values is shown), with its component and how many
learners; the TOP_FAILURES most common, and "Showing N of M" when that cuts the list.

Not implemented yet: a failure saying "is not implemented yet" (a stub's NotImplementedError)
is no message to study; one sentence per component counts the learners with such failures
and names them (the first WHO_SHOWN).

The components are course.toml's and the course's notebook assignments (`notebook`, see
docs/notebook.md). A notebook is graded only for learners whose repository holds it: its mean
and pass rate count those learners, and a note says how many of the graded learners they are.
"""

from __future__ import annotations

import base64
import functools
import html
import json
import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from autograder.gradebook.store import LearnerRecord, learner_dir, read_run
from autograder.reports.files import atomic_write_text
from autograder.reports.sanitize import clean, first_sentence, markdown_inline
from autograder.results import capitalised
from autograder.results.mistake_tags import named_mistake_in_full
from autograder.runtime.shared.messages import NOT_RUN_AFTER_HANGS, TIMEOUT

MARKDOWN_FILE = "report.md"
HTML_FILE = "report.html"
FIGURE_FILE = "score_distribution.png"
TOP_FAILURES = 10
WHO_SHOWN = 8  # learner ids named in a row of "Known mistakes" or the common messages
SHOWING = "Showing the {shown} most common of {total} other failure messages."
NOT_IMPLEMENTED_MARK = "is not implemented yet"
NOT_IMPLEMENTED_ROW = "{count} {learners} not implemented {component} yet (or part of it): {who}."
DEADLINE_NOTE = (
    "Graded at the deadline {deadline}: each learner's last commit whose committer time is at "
    "or before it. Learners who also have later commits, which were not graded: {later} (the "
    "gradebook's late column says yes)."
)
GRADED_WHEN = "Graded {when} UTC{how}."
TESTS_RUN = {True: "visible and hidden tests", False: "visible tests only"}
STALE_COPIES = (
    "Graded from the copy fetched before, as it could not be updated this time (each one's "
    "record.json says why): {learners}."
)
UNFINISHED_SHARDS = (
    "Shard {shards} did not finish grading: this gradebook lacks some of its learners (run "
    "that shard's grade-class again, then merge)."
)
SHARD_NOTE = (
    "This folder holds shard {shard} of the roster only; `autograder merge` combines the shard "
    "folders into the class's gradebook."
)
MISSING_SHARDS = (
    "This gradebook holds only {have} of the run's {count} shards; missing: {missing} (merge "
    "every shard folder of the run)."
)
NOT_SUBMITTED = (
    "{title}: graded for the {have} of {graded} graded learners whose repository holds it; "
    "the others have an empty cell in gradebook.csv."
)
NONE = "None."
REVIEW_HEADING = "Flagged for review (the static check: dynamic reaches, unused library code)"
NO_LEARNER = "no learner graded"
NO_FIGURE = "(no figure: no learner graded)"
NO_MATPLOTLIB = (
    "The score figure needs matplotlib; install it with `pip install 't101-autograder[report]'`."
)


@dataclass
class Component:
    """A column of the gradebook. optional: graded only when the learner's repository holds
    it (a notebook); absent from the records of the others."""

    name: str
    title: str
    points: float
    optional: bool = False


@dataclass(frozen=True)
class FailureRow:
    """A row of "Known mistakes" or "Most common failure messages": how many learners, the
    component (its title), the catalogued mistake's full id ("" when the message names none),
    the message (for a known mistake, its explanation)."""

    learners: int
    component: str
    mistake: str
    message: str
    who: tuple[str, ...] = ()  # the learners' ids, in gradebook order

    @property
    def who_text(self) -> str:
        return who_text(self.who)


def who_text(learners: tuple[str, ...]) -> str:
    """The first WHO_SHOWN learners' ids, then how many more: 'kim, sam, +3 more'."""
    shown = [clean(who) for who in learners[:WHO_SHOWN]]
    if len(learners) > WHO_SHOWN:
        shown.append(f"+{len(learners) - WHO_SHOWN} more")
    return ", ".join(shown)


@dataclass
class ClassReport:
    """Everything the report shows, as plain rows (strings and numbers)."""

    course: str
    learners: int
    graded: int
    totals: list[float]
    max_score: float
    components: list[tuple[str, float, float, int, int]]  # title, mean, points, full, graded
    tests: list[tuple[str, int, int]]  # test name, passed, ran
    failures: list[FailureRow]  # the most common messages that name no known mistake
    errored: list[tuple[str, str]]  # learner, error (not graded yet, nothing submitted aside)
    tampered: list[tuple[str, str]]  # learner, files
    figure: bytes = b""
    notes: list[str] = field(default_factory=list)
    mistakes: list[FailureRow] = field(default_factory=list)  # every known mistake seen
    other_failures: int = 0  # how many distinct other messages (failures shows the first ones)
    # component, the learners (ids in gradebook order) with a not-implemented failure in it
    not_implemented: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    # learner, total ("" when not graded), late ("yes", "no" or ""): gradebook.csv's order
    rows: list[tuple[str, str, str]] = field(default_factory=list)
    # learner, why: roster learners an interrupted run (or unfinished shard) did not reach
    not_graded_yet: list[tuple[str, str]] = field(default_factory=list)
    # learner, why: no commit, an empty repository, no commit before the deadline
    nothing_submitted: list[tuple[str, str]] = field(default_factory=list)
    # learner, the static check's flags for review (file, line, what; no points lost)
    review: list[tuple[str, str]] = field(default_factory=list)

    @property
    def showing(self) -> str:
        """SHOWING when the other messages were cut, else ""."""
        if self.other_failures <= len(self.failures):
            return ""
        return SHOWING.format(shown=len(self.failures), total=self.other_failures)

    def not_implemented_lines(self) -> list[str]:
        return [
            NOT_IMPLEMENTED_ROW.format(
                count=len(who),
                learners="learner has" if len(who) == 1 else "learners have",
                component=c,
                who=who_text(who),
            )
            for c, who in self.not_implemented
        ]


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
    max_score = sum(c.points for c in components)
    per_component, notes = [], []
    for c in components:
        scores = component_scores(graded, c)
        full = sum(1 for s in scores if s >= c.points - 1e-9)
        mean = statistics.fmean(scores) if scores else 0.0
        per_component.append((c.title, mean, c.points, full, len(scores)))
        if c.optional and len(scores) < len(graded):
            notes.append(NOT_SUBMITTED.format(title=c.title, have=len(scores), graded=len(graded)))
    stale = [r.learner for r in graded if r.note]
    if stale:
        notes.append(STALE_COPIES.format(learners=", ".join(stale)))
    run = read_run(out)
    missing = missing_shards(run["merged"]) if run else ""  # merge.py lists the shards
    if missing:
        notes.insert(0, missing)
    if run and run["incomplete"]:
        notes.insert(0, UNFINISHED_SHARDS.format(shards=", ".join(run["incomplete"])))
    if run and run["shard"]:
        notes.insert(0, SHARD_NOTE.format(shard=run["shard"]))
    deadlines = _deadlines(records)
    if deadlines:
        later = sum(1 for r in graded if r.late)
        notes.insert(0, DEADLINE_NOTE.format(deadline=" and ".join(deadlines), later=later))
    if note:
        notes.insert(0, note)
    passed: Counter[str] = Counter()
    ran: Counter[str] = Counter()
    failures: Counter[tuple[str, str, str]] = Counter()  # (component, mistake, message)
    who: dict[tuple[str, str, str], list[str]] = {}  # the same key -> the learners
    stubs: dict[str, list[str]] = {}  # component -> learners with a not-implemented failure
    how: set[tuple[object, object, object]] = set()  # seed, hidden tests ran, s per test
    for record in graded:
        seen: set[tuple[str, str, str]] = set()
        document = _results(out, record.learner)
        how.add(_how(document))
        for test in _tests(document):
            ran[test["name"]] += 1
            if test.get("status") == "passed":
                passed[test["name"]] += 1
            else:
                seen.add(failure_key(test))
        stubbed = {key for key in seen if not key[1] and NOT_IMPLEMENTED_MARK in key[2]}
        failures.update(seen - stubbed)  # count learners, not tests
        for key in seen - stubbed:
            who.setdefault(key, []).append(record.learner)
        for component in sorted({component for component, _, _ in stubbed}):
            stubs.setdefault(component, []).append(record.learner)
    when = _graded_when(graded, how)
    if when:
        notes.insert(1 if note else 0, when)
    # The tests most learners fail first: that is where the class needs help.
    tests = sorted(
        ((name, passed[name], ran[name]) for name in ran),
        key=lambda row: (row[1] / row[2] if row[2] else 1.0, row[0]),
    )
    titles = {c.name: c.title for c in components}
    order = {c.name: i for i, c in enumerate(components)}
    common = sorted(
        failures.items(),
        # most learners first; then in course order
        key=lambda item: (-item[1], order.get(item[0][0], len(order)), item[0]),
    )
    rows = [
        FailureRow(count, titles.get(component, component), mistake, message, tuple(who[key]))
        for key, count in common
        for component, mistake, message in [key]
    ]
    others = [r for r in rows if not r.mistake]
    return ClassReport(
        course=course,
        learners=len(records),
        graded=len(graded),
        totals=[r.total or 0.0 for r in graded],
        max_score=max_score,
        components=per_component,
        tests=tests,
        failures=others[:TOP_FAILURES],
        mistakes=[r for r in rows if r.mistake],
        other_failures=len(others),
        not_implemented=[
            (titles.get(c, c), tuple(who))
            for c, who in sorted(stubs.items(), key=lambda i: (order.get(i[0], len(order)), i[0]))
        ],
        errored=[(r.learner, r.error) for r in records if r.grading_error],
        nothing_submitted=[(r.learner, r.error) for r in records if r.nothing_submitted],
        tampered=[(r.learner, "; ".join(r.tamper)) for r in records if r.tamper],
        review=[(r.learner, "; ".join(r.review)) for r in records if r.review],
        notes=notes,
        rows=[_learner_row(r) for r in sorted(records, key=lambda r: r.learner)],
        not_graded_yet=[(r.learner, r.error) for r in records if r.pending],
    )


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


def _learner_row(record: LearnerRecord) -> tuple[str, str, str]:
    total = ""
    if not record.failed and record.total is not None:
        total = f"{record.total:.2f}"
        total += f" / {record.max_score:.2f}" if record.max_score is not None else ""
    late = "" if record.late is None else ("yes" if record.late else "no")
    if record.pending:
        total = NOT_GRADED_YET
    elif record.nothing_submitted:
        total = NOTHING_SUBMITTED
    return record.learner, total, late


def _learner_table(report: ClassReport) -> tuple[list[str], list[list[str]]]:
    """The Learners section's header and rows; the deadline column only with a deadline."""
    with_late = any(late for _, _, late in report.rows)
    header = ["Learner", "Total"] + (["Commits after the deadline"] if with_late else [])
    rows = [
        [who, total or NOT_GRADED] + ([late] if with_late else [])
        for who, total, late in report.rows
    ]
    return header, rows


NO_MESSAGE = "The test failed without a message."
LEARNERS_LINE = "Each learner's total, as in gradebook.csv (which also has each component's score)."
NOT_GRADED = "error (see the errored learners)"
NOT_GRADED_YET = "not graded yet"
NOTHING_SUBMITTED = "nothing to grade (see the learners with nothing to grade)"
# A shape such as (2, 3, 4) or (5,), then any other number (not one inside a name: W_1, t101).
_SHAPE = re.compile(r"\(\s*-?\d+\s*(?:,\s*-?\d+\s*)*,?\s*\)")
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?!\w)")


def failure_key(test: dict) -> tuple[str, str, str]:
    """(component, mistake id, message) of a failing test in results.json. A message that
    names a catalogued mistake is that mistake (its component, its id, its explanation); any
    other is its first sentence with numbers and shapes replaced by `…`."""
    return _failure_key(str(test.get("output", "")), str((test.get("tags") or [""])[0]))


@functools.lru_cache(maxsize=4096)
def _failure_key(output: str, component: str) -> tuple[str, str, str]:
    """failure_key of one (message, component): a class repeats the same few hundred, and
    normalising each again was most of the report's time for a class of a thousand."""
    text = clean(output)
    found = named_mistake_in_full(text)
    if found is not None:
        mistake, sentence = found
        explanation = sentence.removeprefix(f"[{mistake}]").strip()
        return mistake.split("/", 1)[0], mistake, as_sentence(explanation)
    message = normalise(first_sentence(_hang(text)))
    return component, "", as_sentence(message) if message else NO_MESSAGE


#: The sentence of a call not run again after it hung in earlier tests (runtime/shared/messages.py).
_NOT_RUN_AGAIN = re.compile(
    re.escape(NOT_RUN_AFTER_HANGS.split("{call}")[1].split("{seconds}")[0])
    + r"(?P<seconds>.*?)"
    + re.escape(NOT_RUN_AFTER_HANGS.split("{seconds}")[1].split("{count}")[0])
)


def _hang(text: str) -> str:
    """A call not run again because it hung before, as the time-out it is: one row for one
    infinite loop (H32 saw two, 'did not finish' and 'was not run again', for each learner)."""
    found = _NOT_RUN_AGAIN.search(text)
    if found is None:
        return text
    return TIMEOUT.format(call=text[: found.start()], seconds=found["seconds"])


def normalise(message: str) -> str:
    """The message with its shapes and numbers replaced by `…`: one row for one failure seen
    at several sizes, and no input or expected value of a hidden test."""
    return _NUMBER.sub("…", _SHAPE.sub("(…)", message))


def as_sentence(message: str) -> str:
    """The message as a sentence: it starts with a capital letter (a leading lowercase word is
    capitalised, "the gradient of" -> "The gradient of"; a leading call, which must keep its
    spelling, gets "The call " in front: "The call softmax(...) is not implemented yet") and
    ends with a full stop (or ! or ?)."""
    if not message:
        return message
    if not message.endswith((".", "!", "?")):
        message += "."
    return capitalised(message)  # as results.json already has it since grading does this too


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


def _results(out: Path, learner: str) -> dict:
    """The learner's results.json ({} when it is missing or unreadable)."""
    try:
        document = json.loads((learner_dir(out, learner) / "results.json").read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return document if isinstance(document, dict) else {}


def _tests(document: dict) -> list[dict]:
    tests = document.get("tests")
    return (
        [t for t in tests if isinstance(t, dict) and "name" in t] if isinstance(tests, list) else []
    )


def _how(document: dict) -> tuple[object, object, object]:
    """(seed, whether hidden tests ran, seconds per test) as results.json's extra_data
    records them."""
    extra = document.get("extra_data")
    extra = extra if isinstance(extra, dict) else {}
    return extra.get("seed"), extra.get("hidden_included"), extra.get("test_timeout_s")


def _graded_when(graded: list[LearnerRecord], how: set[tuple[object, object, object]]) -> str:
    """GRADED_WHEN for these records (when and how they were graded), "" without a time."""
    times = sorted(t for t in (_instant(r.graded_at) for r in graded) if t is not None)
    if not times:
        return ""
    first, last = (t.strftime("%Y-%m-%d %H:%M") for t in (times[0], times[-1]))
    when = f"on {first}" if first == last else f"from {first} to {last}"
    seeds = sorted({str(seed) for seed, _, _ in how if seed is not None})
    hidden = {included for _, included, _ in how if included is not None}
    limits = sorted({f"{s:g}" for _, _, s in how if isinstance(s, int | float)}, key=float)
    parts = [f"seed {' and '.join(seeds)}"] if seeds else []
    parts += [TESTS_RUN[included] for included in sorted(hidden, reverse=True)]
    parts += [f"{' and '.join(limits)} s of learner code per test"] if limits else []
    return GRADED_WHEN.format(when=when, how=f" ({', '.join(parts)})" if parts else "")


def _instant(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment.astimezone(UTC) if moment.tzinfo else None


def figure_library() -> Any:
    """matplotlib's pyplot on the Agg backend (no display needed); None when it is missing.
    grade-class imports it in a thread while the learners are graded (half a second)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib import pyplot
    except ImportError:
        return None
    return pyplot


def score_figure(totals: list[float], max_score: float) -> bytes:
    """A PNG histogram of the totals; b"" when matplotlib is missing."""
    pyplot = figure_library()
    if pyplot is None:
        return b""
    import io

    figure, axes = pyplot.subplots(figsize=(6, 3.2), dpi=100)
    bins = [max_score * i / 10 for i in range(11)] if max_score > 0 else 10
    axes.hist(totals, bins=bins, color="#4c72b0", edgecolor="white")
    axes.set_xlabel(f"Total score (out of {max_score:g})")
    axes.set_ylabel("Learners")
    axes.set_title(f"Score distribution ({len(totals)} graded)")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", metadata={"Software": None})
    pyplot.close(figure)
    return buffer.getvalue()


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


def write_report(
    out: Path,
    records: list[LearnerRecord],
    components: list[Component],
    course: str,
    note: str = "",
) -> ClassReport:
    """Write report.md, report.html and the figure into out; return what they show (``note``:
    a sentence said before all others, such as grade-class's INTERRUPTED_NOTE)."""
    report = build_report(out, records, components, course, note)
    report.figure = score_figure(report.totals, report.max_score) if report.totals else b""
    if report.figure:
        (Path(out) / FIGURE_FILE).write_bytes(report.figure)
    elif report.totals:
        report.notes.append(NO_MATPLOTLIB)
    atomic_write_text(Path(out) / MARKDOWN_FILE, render_markdown(report))
    atomic_write_text(Path(out) / HTML_FILE, render_html(report))
    return report


def _summary_lines(report: ClassReport) -> list[str]:
    lines = [f"{report.graded} of {report.learners} learners graded."]
    if report.totals:
        lines.append(
            f"Total: mean {statistics.fmean(report.totals):.2f}, median "
            f"{statistics.median(report.totals):.2f}, out of {report.max_score:.2f}."
        )
    return lines + report.notes


def _mean(mean: float, points: float, count: int) -> str:
    """A mean out of the points, or NO_LEARNER when no learner was graded for it."""
    return f"{mean:.2f} / {points:.2f}" if count else NO_LEARNER


def _figure_markdown(report: ClassReport) -> str:
    if report.figure:
        return f"![Score distribution]({FIGURE_FILE})"
    return "(no figure)" if report.totals else NO_FIGURE


def _cell(text: str) -> str:
    """Text in a table cell, escaped only where Markdown would misread it (sanitize.py)."""
    return markdown_inline(text)


def _text(text: str) -> str:
    """Text in a heading or a list item: the same, and a pipe is plain text there."""
    return markdown_inline(text, table=False)


def _code(text: str) -> str:
    """A learner id as a code span (shown as written; a backtick cannot close it)."""
    return clean(text).replace("\n", " ").replace("`", "'")


def render_markdown(report: ClassReport) -> str:
    out = [f"# {_text(report.course)}: class report", "", *_summary_lines(report), ""]
    out += ["## Score distribution", ""]
    out += [_figure_markdown(report), ""]
    out += [
        "## Score per component",
        "",
        "| Component | Mean | Full marks |",
        "|---|---:|---:|",
    ]
    for title, mean, points, full, count in report.components:
        rate = f"{full} / {count}"
        out.append(f"| {_cell(title)} | {_mean(mean, points, count)} | {rate} |")
    out += ["", "## Known mistakes", ""]
    if report.mistakes:
        out += [
            "| Learners | Component | Known mistake | Explanation | Who |",
            "|---:|---|---|---|---|",
        ]
        out += [
            f"| {r.learners} | {_cell(r.component)} | {_cell(r.mistake)} | {_cell(r.message)} "
            f"| {_cell(r.who_text)} |"
            for r in report.mistakes
        ]
    else:
        out.append(NONE)
    out += ["", "## Most common failure messages", ""]
    if report.failures:
        out += ["| Learners | Component | Message | Who |", "|---:|---|---|---|"]
        out += [
            f"| {r.learners} | {_cell(r.component)} | {_cell(r.message)} | {_cell(r.who_text)} |"
            for r in report.failures
        ]
        out += ["", report.showing] if report.showing else []
    else:
        out.append(NONE)
    out += ["", "## Not implemented yet", ""]
    out += [f"- {_text(line)}" for line in report.not_implemented_lines()] or [NONE]
    out += ["", "## Learners whose grading errored", ""]
    out += [f"- `{_code(who)}`: {_text(error)}" for who, error in report.errored] or [NONE]
    if report.nothing_submitted:
        out += ["", "## Learners with nothing to grade", ""]
        out += [f"- `{_code(who)}`: {_text(why)}" for who, why in report.nothing_submitted]
    if report.not_graded_yet:
        out += ["", "## Learners not graded yet", ""]
        out += [f"- `{_code(who)}`: {_text(why)}" for who, why in report.not_graded_yet]
    out += ["", "## Tamper flags (changed visible tests; graded with pristine tests)", ""]
    out += [f"- `{_code(who)}`: {_text(files)}" for who, files in report.tampered] or [NONE]
    if report.review:
        out += ["", f"## {REVIEW_HEADING}", ""]
        out += [f"- `{_code(who)}`: {_text(flags)}" for who, flags in report.review]
    out += ["", "## Learners", ""]
    header, rows = _learner_table(report)
    if rows:
        out += [LEARNERS_LINE, ""]
        out += ["| " + " | ".join(header) + " |", "|---|---:|" + "---|" * (len(header) - 2)]
        out += ["| " + " | ".join([f"`{_code(row[0])}`", *row[1:]]) + " |" for row in rows]
    else:
        out.append(NONE)
    # Last: one row per test, the longest section (119 rows for this course).
    out += ["", "## Pass rate per test (most failed first)", ""]
    if report.tests:
        out += ["| Test | Passed |", "|---|---:|"]
        out += [f"| {_cell(name)} | {p} / {n} |" for name, p, n in report.tests]
    else:
        out.append(NONE)
    return "\n".join(out) + "\n"


def _table(header: list[str], rows: list[list[str]]) -> str:
    """An HTML table; NONE as a paragraph when there are no rows (as report.md says it)."""
    if not rows:
        return f"<p>{NONE}</p>"
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(cell))}</td>" for cell in row) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render_html(report: ClassReport) -> str:
    title = html.escape(f"{clean(report.course)}: class report")
    parts = [
        "<!doctype html>",
        f'<html lang="en"><head><meta charset="utf-8"><title>{title}</title>',
        "<style>body{font-family:sans-serif;max-width:60rem;margin:auto}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .5rem}"
        "</style></head><body>",
        f"<h1>{title}</h1>",
        *[f"<p>{html.escape(line)}</p>" for line in _summary_lines(report)],
        "<h2>Score distribution</h2>",
    ]
    if report.figure:
        data = base64.b64encode(report.figure).decode("ascii")
        parts.append(f'<img alt="Score distribution" src="data:image/png;base64,{data}">')
    else:
        parts.append(f"<p>{html.escape(_figure_markdown(report))}</p>")
    parts += ["<h2>Score per component</h2>"]
    parts.append(
        _table(
            ["Component", "Mean", "Full marks"],
            [[clean(t), _mean(m, p, n), f"{f} / {n}"] for t, m, p, f, n in report.components],
        )
    )
    parts += ["<h2>Known mistakes</h2>"]
    parts.append(
        _table(
            ["Learners", "Component", "Known mistake", "Explanation", "Who"],
            [
                [str(r.learners), r.component, r.mistake, r.message, r.who_text]
                for r in report.mistakes
            ],
        )
    )
    parts += ["<h2>Most common failure messages</h2>"]
    parts.append(
        _table(
            ["Learners", "Component", "Message", "Who"],
            [[str(r.learners), r.component, r.message, r.who_text] for r in report.failures],
        )
    )
    if report.showing:
        parts.append(f"<p>{html.escape(report.showing)}</p>")
    parts += ["<h2>Not implemented yet</h2>"]
    lines = report.not_implemented_lines() or [NONE]
    parts += [f"<p>{html.escape(line)}</p>" for line in lines]
    parts += ["<h2>Learners whose grading errored</h2>"]
    parts.append(_table(["Learner", "Error"], [[w, clean(e)] for w, e in report.errored]))
    if report.nothing_submitted:
        parts += ["<h2>Learners with nothing to grade</h2>"]
        rows = [[w, clean(why)] for w, why in report.nothing_submitted]
        parts.append(_table(["Learner", "Why"], rows))
    if report.not_graded_yet:
        parts += ["<h2>Learners not graded yet</h2>"]
        rows = [[w, clean(why)] for w, why in report.not_graded_yet]
        parts.append(_table(["Learner", "Why"], rows))
    parts += ["<h2>Tamper flags</h2>"]
    parts.append(_table(["Learner", "Files"], [[w, f] for w, f in report.tampered]))
    if report.review:
        parts += [f"<h2>{html.escape(REVIEW_HEADING)}</h2>"]
        parts.append(_table(["Learner", "Where and what"], [[w, f] for w, f in report.review]))
    parts += ["<h2>Learners</h2>"]
    header, rows = _learner_table(report)
    if rows:
        parts.append(f"<p>{html.escape(LEARNERS_LINE)}</p>")
    parts.append(_table(header, [[clean(row[0]), *row[1:]] for row in rows]))
    parts += ["<h2>Pass rate per test (most failed first)</h2>"]
    parts.append(_table(["Test", "Passed"], [[clean(n), f"{p} / {r}"] for n, p, r in report.tests]))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
