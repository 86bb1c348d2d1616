"""The learner's pyproject.toml: the course's, cut down to what installing and testing need.

The course repository's pyproject.toml is the instructor's: its comments, its extras (dev
tools, benchmarks, large data sets) and its tool settings (ruff excludes naming the references
and the example class) mean nothing to a learner, and some name instructor-only folders. The
release keeps only the tables that `pip install -e .` and `pytest` read: [build-system],
[project] (with its scripts and entry points), [tool.setuptools...], the learner extras of
[project.optional-dependencies], and a new [tool.pytest.ini_options] pointing at the visible
tests. Whole-line comments go; every other table goes.
"""

from __future__ import annotations

import json
import re
import tomllib

#: Tables kept as written (without their whole-line comments), by exact name or prefix + ".".
KEPT_TABLES = ("build-system", "project", "project.scripts", "project.entry-points")
KEPT_PREFIXES = ("project.entry-points.", "tool.setuptools")
EXTRAS_TABLE = "project.optional-dependencies"
PYTEST_TABLE = "tool.pytest.ini_options"
#: Extras a learner may install when the release ships the nbgrader notebook: the notebook's
#: libraries, and the real GloVe vectors it loads when they are installed.
LEARNER_EXTRAS = ("notebook", "glove")

_HEADER = re.compile(r"^(\[\[?)[ \t]*([^\[\]]+?)[ \t]*\]\]?[ \t]*(?:#.*)?$", re.MULTILINE)
_COMMENT_LINE = re.compile(r"^[ \t]*#.*\n", re.MULTILINE)


def learner_pyproject(text: str, *, pytest_block: str, extras: tuple[str, ...] = ()) -> str:
    """The learner's pyproject.toml from the course's `text`: the kept tables, then the extras
    named in `extras` (when the course defines them), then `pytest_block` (a whole
    [tool.pytest.ini_options] table). Raises tomllib.TOMLDecodeError on a file that is not TOML."""
    data = tomllib.loads(text)
    parts = []
    for name, body in _tables(text):
        if name in KEPT_TABLES or name.startswith(KEPT_PREFIXES):
            kept = _COMMENT_LINE.sub("", body).strip("\n")
            parts.append(kept + "\n")
    chosen = {
        key: value
        for key, value in data.get("project", {}).get("optional-dependencies", {}).items()
        if key in extras
    }
    if chosen:
        lines = [f"[{EXTRAS_TABLE}]"]
        lines += [f"{key} = {json.dumps(value)}" for key, value in chosen.items()]
        parts.append("\n".join(lines) + "\n")
    parts.append(pytest_block.strip("\n") + "\n")
    return "\n".join(parts)


def _tables(text: str) -> list[tuple[str, str]]:
    """(name, text from its header to the next header) for each [table] of the file; array
    tables ([[...]]) and the text before the first header are not returned."""
    headers = list(_HEADER.finditer(text))
    return [
        (match.group(2), text[match.start() : nxt.start() if nxt else len(text)])
        for match, nxt in zip(headers, [*headers[1:], None], strict=True)
        if match.group(1) == "["
    ]
