"""Finding and reading course.toml; every problem as a full sentence (file, key, expected, got)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from autograder.config.course_config import COURSE_FILE, CourseConfig, CourseConfigError
from autograder.config.sections import IN_COMPONENT

NO_COURSE_FILE = (
    "No {name} was found in {start} or any folder above it; run this from the course "
    "repository or pass --course FILE."
)
COURSE_FILE_MISSING = "The course file {path} does not exist; expected a {name} file there."
TOML_SYNTAX = "{path} is not valid TOML: {detail}."
NOT_A_TABLE = "{path} must hold TOML tables ([course], [[components]], ...); got {got}."


def find_course_file(start: Path) -> Path:
    """The nearest course.toml in start (a folder or a file's folder) or above it."""
    start = Path(start).resolve()
    folder = start if start.is_dir() else start.parent
    for candidate in (folder, *folder.parents):
        if (candidate / COURSE_FILE).is_file():
            return candidate / COURSE_FILE
    raise CourseConfigError(NO_COURSE_FILE.format(name=COURSE_FILE, start=start))


def load_course(path: Path) -> CourseConfig:
    """Read and validate a course file; CourseConfigError (full sentences) when it is wrong."""
    path = Path(path).resolve()
    if not path.is_file():
        raise CourseConfigError(COURSE_FILE_MISSING.format(path=path, name=COURSE_FILE))
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise CourseConfigError(TOML_SYNTAX.format(path=path, detail=error)) from None
    except UnicodeDecodeError as error:
        raise CourseConfigError(TOML_SYNTAX.format(path=path, detail=error)) from None
    if "path" in data:  # set by the loader, never by the file
        raise CourseConfigError(_sentence(path, {"type": "extra_forbidden", "loc": ("path",)}, {}))
    try:
        return CourseConfig.model_validate({**data, "path": path}, context={"root": path.parent})
    except ValidationError as error:
        details = error.errors()
        # A list whose items failed also reports "too short"; the item errors say it better.
        inner = {d["loc"][:1] for d in details if len(d["loc"]) > 1}
        details = [d for d in details if not (d["type"] == "too_short" and d["loc"] in inner)]
        sentences = [_sentence(path, detail, data) for detail in details]
        raise CourseConfigError(" ".join(sentences)) from None


def load_course_option(course: Path | None) -> CourseConfig:
    """The course of a command's --course option: that file, else the nearest course.toml at
    or above the current folder; CourseConfigError when neither is there or it is wrong."""
    return load_course(course if course else find_course_file(Path.cwd()))


def _key_path(loc: tuple[Any, ...], data: dict[str, Any]) -> str:
    """The key as the file writes it (course.package, limits.memory_mb); a key inside a
    [[components]] table by the component's name (points of component "softmax") when the
    table has a usable one, else by its index (components[0].points)."""
    name = _component_name(loc, data)
    if name is not None and len(loc) > 2:
        return IN_COMPONENT.format(key=_key_path(loc[2:], {}), name=name)
    if name is not None:  # the whole table
        return f'component "{name}"'
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "the top level"


def _component_name(loc: tuple[Any, ...], data: dict[str, Any]) -> str | None:
    """The name of the component a key inside its table belongs to (None: not inside one, or
    the name itself is the key at fault or is not a string)."""
    if len(loc) < 2 or loc[0] != "components" or not isinstance(loc[1], int) or "name" in loc[2:3]:
        return None
    components = data.get("components")
    if not isinstance(components, list) or not 0 <= loc[1] < len(components):
        return None
    table = components[loc[1]]
    name = table.get("name") if isinstance(table, dict) else None
    return name if isinstance(name, str) and name.strip() else None


_EXPECTED = {
    "greater_than": "a number greater than {gt:g}",
    "less_than_equal": "a number at most {le:,}",
    "finite_number": "a finite number",
    "int_parsing": "a whole number",
    "int_type": "a whole number",
    "int_from_float": "a whole number",
    "float_parsing": "a number",
    "float_type": "a number",
    "string_type": "a string",
    "bool_type": "true or false",
    "too_short": "a list of at least {min_length} entry",
    "tuple_type": "a list",
    "model_type": "a table",
    "model_attributes_type": "a table",
    "path_type": "a path (a string)",
}


def _expected(detail: dict[str, Any]) -> str:
    kind = detail.get("type", "")
    ctx = detail.get("ctx") or {}
    if kind == "string_pattern_mismatch":
        dotted = r"\." in str(ctx.get("pattern", ""))
        base = "letters, digits and underscores, not starting with a digit"
        return f"a dotted name ({base}, parts joined by dots)" if dotted else f"a name ({base})"
    if kind in _EXPECTED:
        # 3600.0 reads 3,600: a bound on a float field is a float
        whole = {
            k: int(v) if isinstance(v, float) and v.is_integer() else v for k, v in ctx.items()
        }
        return _EXPECTED[kind].format(**whole)
    message = str(detail.get("msg", "")).removeprefix("Value error, ")
    return message.removeprefix("Input should be ").rstrip(".")


def _sentence(path: Path, detail: dict[str, Any], data: dict[str, Any]) -> str:
    """One pydantic error as a sentence: file, key path, expected, got (``data``: the file's
    tables, for the name of a component)."""
    loc = tuple(p for p in detail.get("loc", ()) if p not in ("function-after", "list"))
    key = _key_path(loc, data)
    kind = detail.get("type", "")
    if kind == "extra_forbidden":
        return f"{path}: the key {key} is not a course setting; remove it or fix its spelling."
    if kind == "missing":
        return f"{path}: the required key {key} is missing."
    expected = _expected(detail)
    if kind == "value_error" and not loc:  # a whole-file rule, e.g. duplicate components
        return f"{path}: {expected}."
    value = detail.get("input")
    got = "a table" if isinstance(value, dict) else repr(value)
    got = str(value).lower() if isinstance(value, bool) else got  # as TOML writes it
    return f"{path}: {key} must be {expected}; got {got}."
