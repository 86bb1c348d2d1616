"""The terminal view: a rich table per submission and, for a class, an overview.

Learner text is passed as rich Text (never markup), after learner_text.py, so `[bold]` in an error
message prints as typed. rich is imported when a table is built, not with this module: a quiet
`autograder grade` (as benchmarks/compare.py's cold start runs it) prints no table.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from autograder.learner_text import PLACE, SENTENCE_END, clean
from autograder.points_text import lost_points
from autograder.results import GradeResult, Ungraded, points
from autograder.results.points_rule import NOT_CHOSEN

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

PROBLEM_LIMIT = 300
#: Where a class overview's reason for not grading continues: `grade` prints it in full first.
WHY_NOT_GRADED = "the line above that says it was not graded"
#: After the first problems, the components a --component run did not grade (0 tests each).
SKIPPED = "Not graded in this run (--component): {titles}."


VISIBLE_ONLY = (
    "Visible tests only: the hidden tests were not run, so the grading your instructor runs "
    "(with them) can differ."
)


def submission_table(result: GradeResult) -> Table:
    """Component, score / max, tests passed; the total as the footer. Each component's first
    problem is printed under the table (print_submission), where it can use the full width."""
    from rich.table import Table
    from rich.text import Text

    table = Table(
        title=Text(clean(f"{result.course}: {result.submission}", 200)),
        show_footer=True,
        title_justify="left",
    )
    table.add_column("Component", footer="Total")
    table.add_column(
        "Score", justify="right", footer=f"{points(result.score)} / {points(result.max_score)}"
    )
    passed = sum(t.passed for t in result.tests)
    table.add_column("Tests passed", justify="right", footer=f"{passed} / {len(result.tests)}")
    for c in result.components:
        style = "green" if c.total and c.passed == c.total and not c.forbidden else "red"
        table.add_row(
            Text(clean(c.title, 200)),
            Text(f"{points(c.score)} / {points(c.max_score)}", style=style),
            f"{c.passed} / {c.total}",
        )
    return table


def first_problems(result: GradeResult) -> list[Text]:
    """One line per component that lost points: its title, then its first problem (shortened)
    and, when a part it builds on fails too, the "Fix X first" note after it (as summary.md
    orders them)."""
    from rich.text import Text

    lines = []
    skipped = [clean(c.title, 200) for c in result.components if c.problem == NOT_CHOSEN]
    for c in result.components:
        if c.problem and c.problem != NOT_CHOSEN:
            own = c.problem.removesuffix(c.note).strip() if c.note else c.problem
            room = max(PROBLEM_LIMIT - len(c.note) - 1, PROBLEM_LIMIT // 2)
            line = Text(f"{clean(c.title, 200)}: ", style="bold")
            line.append(f"{shortened(own, room)} {shortened(c.note)}".strip())
            lines.append(line)
    if skipped:  # one line for the components a --component run left out
        lines.append(Text(SKIPPED.format(titles=", ".join(skipped))))
    return lines


def class_table(results: list[GradeResult | Ungraded]) -> Table:
    """One row per submission: its total and the components that lost points, one a line, by
    title (as the submission's own table above names them) with the points lost, "Scaled
    dot-product attention (-11.16)", the difference of the shown score and maximum (15.63 of
    25.00 lost 9.37); each submission's own table has every score."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title="Class overview", title_justify="left")
    table.add_column("Submission", overflow="fold")
    table.add_column("Total", justify="right", no_wrap=True)
    table.add_column("Points lost in", overflow="fold")
    for result in results:
        if isinstance(result, Ungraded):
            reason = shortened(result.reason, rest=WHY_NOT_GRADED)  # no summary.md to read
            reason = Text(f"not graded: {reason}", style="red")
            table.add_row(Text(clean(result.submission, 200)), "", reason)
            continue
        lost = [
            f"{clean(c.title, 200)} (-{lost_points(c.score, c.max_score)})"
            for c in result.components
            if points(c.score) != points(c.max_score)  # as shown: no "(-0.00)"
        ]
        table.add_row(
            Text(clean(result.submission, 200)),
            f"{points(result.score)} / {points(result.max_score)}",
            Text("\n".join(lost) or "nothing"),
        )
    return table


#: Where a sentence cut inside continues; {rest} is the report that has it whole.
CONTINUED = "… (continued in {rest})"
_OPENING, _CLOSING = "([{", ")]}"


def shortened(text: str, limit: int = PROBLEM_LIMIT, rest: str = "summary.md") -> str:
    """Learner text for one line or cell, cleaned, and past limit cut between sentences.

    The first sentence is kept, then the next ones while they fit; an ellipsis stands for
    those left out (rest, summary.md by default, has them all). A later sentence that names a
    file and line (PLACE, "It was called in x.py at line 25.") is kept after the ellipsis, so
    the learner still reads where, even past limit when the first sentence fits alone (a place
    is at most half of limit: a fix is never cut for it). Only a first sentence too long alone
    is cut inside, before
    any code span or bracket that would not fit whole (a fix such as
    "nn.ModuleList([... for _ in range(n)])" is never cut in half), and says it continues in
    rest. Sentences end only outside brackets and backticks."""
    text = clean(text, len(text)).replace("\n", " ").strip()
    if len(text) <= limit:
        return text
    sentences = _sentences(text)
    places = [i for i, s in enumerate(sentences) if i and PLACE.search(s)]
    place = places[0] if places and len(sentences[places[0]]) <= limit // 2 else None
    if len(sentences[0]) > limit:  # the first sentence alone is too long
        after = f" {sentences[place]}" if place is not None else ""
        note = CONTINUED.format(rest=rest)
        return _cut_outside_code(sentences[0], limit - len(after) - len(note)) + note + after
    count = 1
    while count < len(sentences) and len(_kept(sentences, count + 1, place)) <= limit:
        count += 1
    return _kept(sentences, count, place)


def _sentences(text: str) -> list[str]:
    """text split at its sentence ends, but not at one inside brackets or a code span ("e.g.
    x" in parentheses goes on)."""
    sentences: list[str] = []
    for piece in SENTENCE_END.split(text):
        if sentences and not _closed(sentences[-1]):
            sentences[-1] += f" {piece}"
        else:
            sentences.append(piece)
    return sentences


def _closed(text: str) -> bool:
    """Whether every bracket and code span (backticks) opened in text is closed again."""
    return not _open_at(text)[-1]


def _open_at(text: str) -> list[bool]:
    """For each position 0..len(text): whether a bracket or code span is open just before it."""
    depth, code, open_at = 0, False, [False]
    for char in text:
        if char == "`":
            code = not code
        elif not code and char in _OPENING:
            depth += 1
        elif not code and char in _CLOSING:
            depth = max(depth - 1, 0)
        open_at.append(code or depth > 0)
    return open_at


def _kept(sentences: list[str], count: int, place: int | None) -> str:
    """The first count sentences, an ellipsis if any are left out, then the place sentence
    when it is not among them."""
    parts = sentences[:count]
    if any(i != place for i in range(count, len(sentences))):
        parts.append("…")
    if place is not None and place >= count:
        parts.append(sentences[place])
    return " ".join(parts)


def _cut_outside_code(text: str, limit: int) -> str:
    """text cut to at most limit characters at the last blank outside brackets and code
    spans (at the last blank at all when there is none: a word is cut only when it alone is
    that long)."""
    open_at = _open_at(text)
    blanks = [i for i, char in enumerate(text[: limit + 1]) if char == " "]
    outside = [i for i in blanks if not open_at[i]]
    cut = text[: (outside or blanks or [limit])[-1]]
    return cut.rstrip(" ,;:")


def new_console() -> Console:
    """A console for these tables, with rich's highlighting off (learner text prints as typed).
    It loads every rich module the tables use, so that they come in before the grading does."""
    import rich.table
    import rich.text  # noqa: F401
    from rich.console import Console

    return Console(highlight=False)


def print_submission(result: GradeResult, console: Console) -> None:
    """The table, each component's first problem under it, then a blank line (whether or not
    there were problems: the next submission's table or the last line stands apart)."""
    from rich.text import Text

    console.print(submission_table(result))
    if not result.hidden_included:
        console.print(VISIBLE_ONLY)
    for note in result.notes:
        console.print(Text(shortened(note)), overflow="fold")
    problems = first_problems(result)
    if problems:
        console.print("First problem per component:")
        for line in problems:
            console.print(line, overflow="fold")
    console.print()


def print_class(results: list[GradeResult | Ungraded], console: Console) -> None:
    console.print(class_table(results))


GRADING = "Grading {name}: test {done} of {total}"


class GradingTicker:
    """pytest plugin: moves a status line to the test being run ("test 37 of 116"), so that
    a learner whose code runs out of time sees the grading wait, not a frozen terminal."""

    def __init__(self, status: Any, name: str) -> None:
        from rich.markup import escape

        self.status = status
        self.name = escape(name)  # a folder named "[red]amara" is shown as it is
        self.total = 0
        self.done = 0

    def pytest_runtest_logstart(self, nodeid: str, location: Any) -> None:
        self.done += 1
        self.status.update(GRADING.format(name=self.name, done=self.done, total=self.total))


@contextmanager
def grading_status(name: str) -> Iterator[GradingTicker | None]:
    """While one submission is graded: a spinner and GRADING on the terminal's stderr, moved
    by the GradingTicker yielded (None, and nothing shown, when stderr is not a terminal).
    It writes to a duplicate of stderr's descriptor: grading redirects sys.stderr into
    grader.log, and pytest's capture points descriptor 2 at a file of its own."""
    from rich.console import Console

    try:
        if not sys.stderr.isatty():
            raise OSError
        terminal = os.fdopen(os.dup(sys.stderr.fileno()), "w", encoding="utf-8")
    except (OSError, ValueError, AttributeError):  # no terminal, or a stderr without a descriptor
        yield None
        return
    with terminal:
        console = Console(file=terminal, highlight=False)
        ticker = GradingTicker(None, clean(name, 100))
        with console.status(f"Grading {ticker.name}", spinner="line") as ticker.status:
            yield ticker
