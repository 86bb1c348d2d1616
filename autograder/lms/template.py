"""An LMS's CSV file read and written back as it came: BOM, line endings, delimiter, quoting.

`autograder export` fills one column of an instructor's LMS export; everything else comes back
byte for byte, so that the LMS reads the file as its own: a UTF-8 BOM, the line endings (and
whether the file ends with one), the delimiter, and the quoting style that writes the file's
own lines back exactly. Rows are read with Python's csv module; a row may span lines.

Design: docs/internals/gradebook.md#read-and-written-back-byte-for-byte.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

from autograder.atomic_files import atomic_write_bytes

BOM = b"\xef\xbb\xbf"
DELIMITERS = (",", ";", "\t", ":")
STYLES = ("minimal", "all", "spaces")

NOT_READABLE = "The template {path} could not be read ({error})."
NOT_UTF8 = (
    "The template {path} is not UTF-8 text ({error}); export it from the LMS again, or save it "
    "as a UTF-8 CSV file."
)
NOT_CSV = "The template {path} is not a readable CSV file ({error})."
EMPTY = "The template {path} is empty; export the gradebook from the LMS again."


class TemplateError(ValueError):
    """A template that cannot be used; the message is one sentence."""


@dataclass
class CsvTemplate:
    """A CSV file's header and rows, with what writing it back needs: ``lines`` the line each
    row starts on (for sentences naming a row)."""

    path: Path
    header: list[str]
    rows: list[list[str]]
    lines: list[int] = field(default_factory=list)
    bom: bool = False
    newline: str = "\n"
    delimiter: str = ","
    style: str = "minimal"
    final_newline: bool = True

    def render(self) -> bytes:
        """The file's bytes: header and rows in this file's own format."""
        text = self.newline.join(
            _line(row, self.delimiter, self.style) for row in [self.header, *self.rows]
        )
        text += self.newline if self.final_newline else ""
        return (BOM if self.bom else b"") + text.encode("utf-8")

    def write(self, path: Path) -> Path:
        """Write render() to path atomically."""
        return atomic_write_bytes(path, self.render())


def read_template(path: Path) -> CsvTemplate:
    """The CSV file at path; TemplateError (a sentence) when it cannot be read."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise TemplateError(NOT_READABLE.format(path=path, error=error.strerror)) from None
    bom = data.startswith(BOM)
    try:
        text = data[len(BOM) if bom else 0 :].decode("utf-8")
    except UnicodeDecodeError as error:
        raise TemplateError(NOT_UTF8.format(path=path, error=error)) from None
    if not text.strip():
        raise TemplateError(EMPTY.format(path=path))
    newline = "\r\n" if "\r\n" in text.split("\n", 1)[0] + "\n" else "\n"
    first = text.split(newline, 1)[0]
    delimiter = max(DELIMITERS, key=lambda d: len(_fields(first, d)))
    try:
        records, lines = _records(text, delimiter)
    except csv.Error as error:
        raise TemplateError(NOT_CSV.format(path=path, error=error)) from None
    template = CsvTemplate(
        path=Path(path),
        header=records[0],
        rows=records[1:],
        lines=lines[1:],
        bom=bom,
        newline=newline,
        delimiter=delimiter,
        final_newline=text.endswith(newline),
    )
    template.style = _style(text, template)
    return template


def _fields(line: str, delimiter: str) -> list[str]:
    try:
        return next(csv.reader([line], delimiter=delimiter), [])
    except csv.Error:
        return []


def _records(text: str, delimiter: str) -> tuple[list[list[str]], list[int]]:
    """The rows of the text and the line each starts on (1-based)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    records, lines, line = [], [], 1
    for record in reader:
        records.append(record)
        lines.append(line)
        line = reader.line_num + 1
    return records, lines


def _style(text: str, template: CsvTemplate) -> str:
    """The quoting style that writes the template back exactly ("minimal" when none does)."""
    for style in STYLES:
        template.style = style
        if template.render() == (BOM if template.bom else b"") + text.encode("utf-8"):
            return style
    return "minimal"


def _line(row: list[str], delimiter: str, style: str) -> str:
    return delimiter.join(_quoted(value, delimiter, style) for value in row)


def _quoted(value: str, delimiter: str, style: str) -> str:
    """One field as the style writes it: quoted (quotes doubled) when the style wants it."""
    special = delimiter in value or '"' in value or "\n" in value or "\r" in value
    if style == "spaces":
        special = special or " " in value or "\t" in value
    if style == "all" or special:
        return '"' + value.replace('"', '""') + '"'
    return value
