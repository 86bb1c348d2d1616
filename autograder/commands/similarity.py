"""`autograder similarity DIR`: how alike the graded learners' code is, for the instructor.

1. read DIR's records: every graded learner (an error row has nothing to compare) and the
   source grade-class kept of them (DIR/<learner>/source: copies/sources.py);
2. compare every pair, per component and on the whole package, with the released stubs as
   boilerplate (copies/measure.py, copydetect in a child process);
3. flag the pairs far above the class's own distribution (copies/judge.py);
4. write DIR/similarity.csv and DIR/similarity.html (copies/page.py) and the class report
   again, which then links the page and gives each learner their most similar classmate.

It holds DIR's lock (a grade-class or merge writing DIR meanwhile is refused, and refuses it).

Exit status: 0 no pair is flagged; 1 some pairs are flagged (named on stdout); 2 the check
could not run (a sentence on stderr says why).
"""

from __future__ import annotations

import csv
import importlib.util
import sys
from pathlib import Path

from autograder.config import CourseConfig, CourseConfigError, load_course_option
from autograder.copies import judge, measure, page, sources
from autograder.copies.similarity_file import CSV_FILE, HTML_FILE, WHOLE
from autograder.gradebook import lock, report, store
from autograder.learner_text import spreadsheet_row

NO_COPYDETECT = (
    "The similarity check needs copydetect; install it with "
    "`pip install 't101-autograder[similarity]'`."
)
NOT_A_CLASS = (
    "{dir} holds no graded learners (no DIR/<learner>/record.json); give the output folder of "
    "`autograder grade-class` or `autograder merge`."
)
TOO_FEW = "Only {count} graded learner{s} with kept source in {dir}: a similarity check needs two."
SEPARATOR = "# ===== {file} =====\n"
DONE = (
    "Compared {learners} learners ({pairs} pairs on the whole package). Wrote {csv} and "
    "{html}; the class report links them."
)
FLAGGED_LINE = "Flagged on the whole package: {pairs}."
FLAGGED_PARTS = "Flagged on a component only: {pairs}."
NONE_FLAGGED = "No pair stands out from the class."
#: After DONE: learners compared on the whole package but left out of some components.
PARTLY = "Not compared in some components (too little code of their own there): {who}."
EXIT_OK, EXIT_FLAGGED, EXIT_BAD = 0, 1, 2


def main(*, out_dir: Path, course: Path | None = None, quiet: bool = False) -> int:
    """Run the check on out_dir; the exit status of the module docstring."""
    if importlib.util.find_spec("copydetect") is None:
        return _error(NO_COPYDETECT)
    try:
        config = load_course_option(course)
    except CourseConfigError as error:
        return _error(str(error))
    out_dir = Path(out_dir).resolve()
    if not out_dir.is_dir() or not store.read_records(out_dir):
        return _error(NOT_A_CLASS.format(dir=out_dir))
    try:
        held = lock.hold(out_dir, "similarity")
    except lock.LockError as busy:
        return _error(str(busy))
    with held:
        records = store.read_records(out_dir)
        check = _check(config, out_dir, records)
        if check is None:
            count = sum(sources.has_source(store.learner_dir(out_dir, r.learner)) for r in records)
            return _error(TOO_FEW.format(count=count, s="" if count == 1 else "s", dir=out_dir))
        page.write(out_dir, check)
        _rewrite_report(config, out_dir, records)
    return _say(check, out_dir, quiet)


def _check(config: CourseConfig, out_dir: Path, records: list[store.LearnerRecord]):
    """The judged comparison of the graded learners with kept source (None: fewer than two)."""
    graded = [r for r in records if not r.failed]
    kept = [r for r in graded if sources.has_source(store.learner_dir(out_dir, r.learner))]
    if len(kept) < 2:
        return None
    documents = {r.learner: _documents(config, store.learner_dir(out_dir, r.learner)) for r in kept}
    stubs = _stubs(config)
    result = measure.measure({"documents": documents, "boilerplate": stubs, "whole": WHOLE})
    pairs = [judge.Pair(a, b, c, s) for a, b, c, s in result["pairs"]]
    judged, cuts, converged = judge.judge(pairs, WHOLE)
    order = {c: i for i, c in enumerate([WHOLE, *(c.name for c in config.components)])}
    judged.sort(key=lambda p: (order.get(p.component, len(order)), p.learner_a, p.learner_b))
    compared = {p.learner_a for p in judged if p.component == WHOLE}
    compared |= {p.learner_b for p in judged if p.component == WHOLE}
    return page.Check(
        course=config.course.name,
        pairs=judged,
        cuts={c: cuts[c] for c in sorted(cuts, key=lambda c: order.get(c, len(order)))},
        documents=documents,
        slices=result["slices"],
        skipped={
            page.NOT_GRADED: [r.learner for r in records if r.failed],
            page.NO_SOURCE: [r.learner for r in graded if r not in kept],
            page.TOO_LITTLE: [r.learner for r in kept if r.learner not in compared],
        },
        stamp={r.learner: r.graded_at for r in kept},
        converged=converged,
    )


def _documents(config: CourseConfig, folder: Path) -> dict[str, str]:
    """{component: its kept module's text} and the whole package (WHOLE): the modules in course
    order, each after a comment line naming it."""
    texts = {c.name: sources.read(folder, c.module_file) for c in config.components}
    found = {name: text for name, text in texts.items() if text is not None}
    files = {c.name: c.module_file for c in config.components}
    found[WHOLE] = "\n".join(SEPARATOR.format(file=files[n]) + t for n, t in found.items())
    return found


def _stubs(config: CourseConfig) -> dict[str, str]:
    """The released stubs, per component and whole ("" for a module the course lacks)."""
    package = config.root / config.course.package_dir
    stubs = {}
    for c in config.components:
        path = package / c.module_file
        stubs[c.name] = path.read_text(encoding="utf-8") if path.is_file() else ""
    stubs[WHOLE] = "\n".join(stubs.values())
    return {WHOLE: stubs.pop(WHOLE), **stubs}


def _rewrite_report(
    config: CourseConfig, out_dir: Path, records: list[store.LearnerRecord]
) -> None:
    """The class report again, now with the similarity check: the records, and the rows of
    gradebook.csv that have none (learners not graded yet) as they are there."""
    from autograder.gradebook.class_output import class_components

    have = {r.learner for r in records}
    rows = _gradebook_rows(out_dir / store.GRADEBOOK_FILE)
    records = records + [
        store.LearnerRecord(learner, error=error, pending=True)
        for learner, error in rows
        if learner not in have
    ]
    records.sort(key=lambda r: r.learner)
    report.write_report(out_dir, records, class_components(config), config.course.name)


def _gradebook_rows(path: Path) -> list[tuple[str, str]]:
    try:
        with path.open(newline="", encoding="utf-8") as stream:
            rows = [spreadsheet_row(row) for row in csv.DictReader(stream)]
        return [(row["learner"], row.get("errors", "")) for row in rows]
    except (OSError, KeyError, UnicodeDecodeError, csv.Error):
        return []


def _say(check: page.Check, out_dir: Path, quiet: bool) -> int:
    whole = [p for p in check.pairs if p.component == WHOLE]
    flagged = [p for p in check.pairs if p.flagged]
    learners = {p.learner_a for p in whole} | {p.learner_b for p in whole}
    if not quiet:
        print(
            DONE.format(
                learners=len(learners),
                pairs=len(whole),
                csv=out_dir / CSV_FILE,
                html=out_dir / HTML_FILE,
            )
        )
        for line in _left_out(check, learners):
            print(line)
    together = {(p.learner_a, p.learner_b) for p in flagged if p.component == WHOLE}
    on_whole = [f"{a} and {b} ({_where(check, a, b)})" for a, b in sorted(together)]
    on_parts = [
        f"{p.learner_a} and {p.learner_b} in {p.component} ({p.similarity:.2f})"
        for p in flagged
        if (p.learner_a, p.learner_b) not in together
    ]
    if on_whole:
        print(FLAGGED_LINE.format(pairs="; ".join(on_whole)))
    if on_parts:
        print(FLAGGED_PARTS.format(pairs="; ".join(on_parts)))
    if not flagged and not quiet:
        print(NONE_FLAGGED)
    return EXIT_FLAGGED if flagged else EXIT_OK


def _left_out(check: page.Check, compared: set[str]) -> list[str]:
    """The learners the comparison left out, one sentence per reason (as the page says them),
    then those compared on the whole package but not in some of its components."""
    lines = [
        page.SKIPPED.format(why=why, who=", ".join(who))
        for why, who in check.skipped.items()
        if who
    ]
    missing: dict[str, list[str]] = {}
    for component in check.cuts:
        among = [p for p in check.pairs if p.component == component]
        present = {p.learner_a for p in among} | {p.learner_b for p in among}
        for learner in sorted(compared - present):
            missing.setdefault(learner, []).append(component)
    if missing:
        who = "; ".join(f"{name} ({', '.join(parts)})" for name, parts in sorted(missing.items()))
        lines.append(PARTLY.format(who=who))
    return lines


def _where(check: page.Check, a: str, b: str) -> str:
    """A flagged pair's similarity on the whole package, then on each component flagged."""
    mine = [p for p in check.pairs if (p.learner_a, p.learner_b) == (a, b) and p.flagged]
    mine.sort(key=lambda p: p.component != WHOLE)
    return ", ".join(
        f"{p.similarity:.2f}" if p.component == WHOLE else f"{p.component} {p.similarity:.2f}"
        for p in mine
    )


def _error(sentence: str) -> int:
    print(sentence, file=sys.stderr)
    return EXIT_BAD
