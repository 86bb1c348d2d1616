"""Neutralising learner text (messages, captured output) before it lands in a report.

Learner code controls what it prints and what its exceptions say. Before such text reaches a
terminal, a Markdown page, an XML file or Gradescope it goes through here: escape sequences and
control characters are stripped (so output cannot move the cursor, recolour a terminal or break
XML), long text is capped, and Markdown gets its own escaping. Every CSV file the framework
writes goes through csv_text, so that no cell is run as a spreadsheet formula.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable

#: Characters kept from learner output by default (about one screen of text).
OUTPUT_LIMIT = 4000
CUT_NOTE = "\n… ({count} more characters cut)"

# ANSI/VT escape sequences: CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST), other 2-byte ESC x.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?")
# C0 controls except tab and newline, DEL, C1 controls, bidi overrides and isolates.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# Lone surrogates: a Python str may hold them (an exception message made with "\ud800"), UTF-8
# cannot, and every report is written in UTF-8.
_SURROGATES = re.compile(r"[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def strip_control(text: str) -> str:
    """text without escape sequences or control characters; CRLF and CR become newlines; a
    lone surrogate becomes U+FFFD, the replacement character."""
    text = _ESCAPES.sub("", text).replace("\r\n", "\n").replace("\r", "\n")
    return _SURROGATES.sub(REPLACEMENT, _CONTROLS.sub("", text))


def cap(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """text cut to at most limit characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + CUT_NOTE.format(count=len(text) - limit)


def clean(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """strip_control then cap: the form every report stores."""
    return cap(strip_control(text), limit)


#: A sentence that names a file and line: "It was called in x.py at line 25.", "... x.py:17 ...".
PLACE = re.compile(r"\bline \d+|\.py:\d+")
#: Where a sentence may end: after . ! or ? and a blank ("1.5" and "torch.nn" go on).
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def first_sentence(text: str) -> str:
    """The first line of text, up to and including its first sentence end."""
    line = strip_control(text).strip().split("\n", 1)[0]
    match = re.search(r"[.!?](\s|$)", line)
    return line[: match.start() + 1] if match else line


def first_sentence_and_place(text: str) -> str:
    """first_sentence, then the first later sentence of its line that names a file and line
    (PLACE) when the first does not: "... did not finish within 10 s ... When it was stopped,
    it was running assignments/t101/feed_forward.py:17 in forward."."""
    return with_place(first_sentence(text), text)


def with_place(sentence: str, text: str) -> str:
    """``sentence`` (of text's first line), then the first sentence after it on that line
    that names a file and line (PLACE), when ``sentence`` does not: a catalogued mistake's
    sentence, then its "Look at assignments/t101/attention.py:23, the line that ..."."""
    if PLACE.search(sentence):
        return sentence
    line = strip_control(text).strip().split("\n", 1)[0]
    start = line.find(sentence)
    rest = line[start + len(sentence) :].strip() if start >= 0 else ""
    place = next((s for s in SENTENCE_END.split(rest) if PLACE.search(s)), "")
    return f"{sentence} {place}" if place else sentence


def markdown_inline(text: str, limit: int = OUTPUT_LIMIT, *, table: bool = True) -> str:
    """Learner text made safe inside a Markdown paragraph, list item or table cell, escaping
    only what CommonMark and GitHub would misrender there, so that the text reads the same raw
    (in a terminal or an editor) and rendered: one line (line breaks become <br>); no HTML tag,
    entity or autolink; no emphasis, strikethrough, math, link or image; no block (a heading,
    quote, list or rule) at its start; a `|` escaped (table=False: outside a table, where it is
    plain text). Paired backticks stay code spans (shown as written); a word with an underscore
    at its edge (`__init__`, `_helper`) becomes one, since that underscore would start or end
    emphasis."""
    text = clean(text, limit).strip()
    math = text.count("$") >= 2  # GitHub renders $...$ as math
    lines = [_markdown_line(line.strip(), table=table, math=math) for line in text.split("\n")]
    return _block_start_escaped("<br>".join(lines))


# A backslash that would escape the next character (ASCII punctuation) or end the line (a hard
# break); an entity such as &amp; or &#38;; `<` that could open a tag or an autolink; `*` and
# `~` that could open or close emphasis or strikethrough (unless blanks are on both sides); a
# word with an underscore that is not between two letters or digits; `]` that would close a
# link, image or link reference definition.
_BACKSLASH = re.compile(r"\\(?=[!-/:-@\[-`{-~]|$)")
_ENTITY = re.compile(r"&(?=#[0-9]{1,7};|#[xX][0-9a-fA-F]{1,6};|[A-Za-z][A-Za-z0-9]{1,31};)")
_TAG_OR_AUTOLINK = re.compile(r"<(?=[A-Za-z/!?])")
_DELIMITER = re.compile(r"(?<=\S)[*~]|[*~](?=\S)")
_EDGE_UNDERSCORE_WORD = re.compile(r"[\w./-]*(?:(?<![^\W_])_|_(?![^\W_]))[\w./-]*")
_LINK_END = re.compile(r"\](?=[(\[:])")
_BACKTICKS = re.compile(r"`+")
# What would start a block at the start of a paragraph or list item.
_BLOCK_START = re.compile(r"^(?:[#>]|[-+*](?=\s|$)|-[-\s]*$)")
_ORDERED_ITEM = re.compile(r"^(\d{1,9})(?=[.)](?:\s|$))")
_HEADING_TAIL = re.compile(r"(?<=\s)(?=#+$)")


def _markdown_line(line: str, *, table: bool, math: bool) -> str:
    """One line of learner text: code spans kept as written, the rest escaped where needed."""
    out, position = [], 0
    for start, end in _code_spans(line):
        out.append(_markdown_plain(line[position:start], table=table, math=math))
        span = line[start:end]
        out.append(span.replace("|", "\\|") if table else span)  # GFM unescapes it in a cell
        position = end
    out.append(_markdown_plain(line[position:], table=table, math=math))
    return "".join(out)


def _code_spans(line: str) -> list[tuple[int, int]]:
    """(start, end) of each code span: a run of backticks closed by the next run as long."""
    spans, search = [], 0
    while (opening := _BACKTICKS.search(line, search)) is not None:
        width = len(opening.group())
        runs = _BACKTICKS.finditer(line, opening.end())
        closing = next((run for run in runs if len(run.group()) == width), None)
        if closing is None:
            search = opening.end()
            continue
        spans.append((opening.start(), closing.end()))
        search = closing.end()
    return spans


def _markdown_plain(text: str, *, table: bool, math: bool) -> str:
    """Text outside code spans, escaped only where Markdown would read it as markup."""
    text = _BACKSLASH.sub(r"\\\\", text)
    text = _ENTITY.sub(r"\\&", text)
    text = _TAG_OR_AUTOLINK.sub("&lt;", text)
    text = text.replace("`", "\\`")  # a backtick left unpaired
    text = _DELIMITER.sub(lambda match: "\\" + match.group(), text)
    text = _EDGE_UNDERSCORE_WORD.sub(_code_word, text)
    text = _LINK_END.sub(r"\\]", text)
    if math:
        text = text.replace("$", "\\$")
    if table:
        text = text.replace("|", "\\|")
    return text


def _code_word(match: re.Match[str]) -> str:
    """A word whose underscore would open or close emphasis, as a code span (a sentence's
    period stays outside); underscores alone are escaped, unless blanks stand on both sides
    (`for _ in range(n)`): such a run can neither open nor close emphasis."""
    word = match.group()
    core = word.rstrip(".")
    if not core.strip("_"):
        text, start, end = match.string, match.start(), match.end()
        if word == core and text[start - 1 : start].isspace() and text[end : end + 1].isspace():
            return word
        return word.replace("_", "\\_")
    before = match.string[: match.start()]
    odd = (len(before) - len(before.rstrip("\\"))) % 2  # that backslash would escape the `
    return ("\\" if odd else "") + f"`{core}`{word[len(core) :]}"


def _block_start_escaped(text: str) -> str:
    """text with a backslash where it would otherwise start a heading, quote, list item or
    rule, and before a trailing run of # (a heading's closing sequence)."""
    text = _BLOCK_START.sub(lambda match: "\\" + match.group(), text)
    text = _ORDERED_ITEM.sub(r"\1\\", text)
    return _HEADING_TAIL.sub("\\\\", text)


def markdown_block(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """Learner text as a fenced code block whose fence no line of the text can close."""
    text = clean(text, limit).rstrip("\n")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


# --- GitHub Actions: logs, annotations, job summaries and pull-request comments ---------------

#: Characters of learner text shown in one annotation, one summary or one PR comment.
GITHUB_LIMIT = 1000
# A line the runner would read as a workflow command: `::name ...::`, or the older `##[name]`
# and `##vso[...]` forms, possibly after leading blanks.
_WORKFLOW_COMMAND = re.compile(r"^(\s*)(::|##\[|##vso\[)", re.MULTILINE | re.IGNORECASE)
_MENTION = re.compile(r"@(?=[A-Za-z0-9_-])")


def neutralise_workflow_commands(text: str) -> str:
    """text whose lines cannot be read as GitHub workflow commands: a line starting with `::`
    or `##[` gets a visible `> ` in front, so it shows as written but does nothing. Escape
    sequences and control characters go first, so a carriage return cannot start a new line
    in the runner's eyes after this check."""
    return _WORKFLOW_COMMAND.sub(r"\1> \2", strip_control(text))


def for_log(text: str, limit: int = GITHUB_LIMIT) -> str:
    """Learner text as printed to a CI log: cleaned, capped, no workflow commands."""
    return neutralise_workflow_commands(cap(strip_control(text), limit))


def markdown_github(text: str, limit: int = GITHUB_LIMIT) -> str:
    """markdown_inline for GitHub: also no @mentions (they would notify people) and no
    workflow commands; `%0A`-style escapes stay literal because `%` is not special here."""
    text = markdown_inline(neutralise_workflow_commands(text), limit)
    return _MENTION.sub("&#64;", text)


# --- Spreadsheets: the CSV files the framework writes (gradebook.csv, similarity.csv) ---------

#: What makes Excel, LibreOffice or Google Sheets read a CSV cell as a formula (OWASP's list).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: Put in front of such a cell, so that a spreadsheet shows it as text.
FORMULA_GUARD = "'"
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def spreadsheet_cell(value: object) -> object:
    """value as a CSV cell no spreadsheet runs as a formula (OWASP's rule): a string that
    starts with =, +, -, @, a tab or a carriage return gets a single quote in front, unless it
    is a number ("-1", "+2.50", "1e-3" stay numbers). A string that starts with a single quote
    gets one more, so that spreadsheet_text gives back every string exactly. Values that are
    not strings are returned as they are."""
    if not isinstance(value, str) or not value.startswith((*FORMULA_STARTS, FORMULA_GUARD)):
        return value
    return value if _NUMBER.fullmatch(value) else FORMULA_GUARD + value


def spreadsheet_text(cell: str) -> str:
    """The string spreadsheet_cell was given, from the cell it made (for a CSV file the
    framework reads back)."""
    return cell[len(FORMULA_GUARD) :] if cell.startswith(FORMULA_GUARD) else cell


def spreadsheet_row(row: dict[str, str]) -> dict[str, str]:
    """A csv.DictReader row of a file csv_text wrote, every cell through spreadsheet_text
    (a cell missing from a short row stays None)."""
    return {key: value if value is None else spreadsheet_text(value) for key, value in row.items()}


def csv_text(rows: Iterable[Iterable[object]]) -> str:
    """rows as CSV text (commas, quotes where needed, "\n" line ends), every cell through
    spreadsheet_cell: the one way the framework writes a CSV file of its own. A cell holding a
    line break (a carriage return too) is quoted, so it cannot start a row of its own."""
    stream = io.StringIO()
    # Python 3.11 quotes a cell for the characters of the line terminator only: with "\r\n",
    # a lone "\r" is quoted too; each row's own terminator then becomes "\n".
    writer = csv.writer(stream, lineterminator="\r\n")
    lines = []
    for row in rows:
        stream.seek(0)
        stream.truncate()
        writer.writerow([spreadsheet_cell(cell) for cell in row])
        lines.append(stream.getvalue().removesuffix("\r\n") + "\n")
    return "".join(lines)
