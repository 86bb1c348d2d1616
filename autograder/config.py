"""course.toml as a typed, validated CourseConfig.

The course file is the only place that ties the course-agnostic framework to one course. Every
problem with it is reported as a full sentence naming the file, the key path, what was expected
and what came, so an instructor can fix it without reading this module.

Paths (`reference_dir`, `visible_tests`, `hidden_tests`) are resolved relative to the course
file. `package_dir` stays relative: it names where the package lives inside *any* learner
repository, the course's own root being just one of them.
"""

from __future__ import annotations

import keyword
import string
import tomllib
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

COURSE_FILE = "course.toml"

#: Names a component may not take: they are pytest's own markers or the framework's.
RESERVED_MARKERS = frozenset(
    {"weight", "skip", "skipif", "xfail", "parametrize", "usefixtures", "filterwarnings"}
)

DEFAULT_FORBIDDEN_MESSAGE = (
    "The course asks you to build this yourself; {api} is a library implementation of it, "
    "so this component scores zero."
)

# Learner/instructor-facing sentence templates (tests reuse them).
NO_COURSE_FILE = (
    "No {name} was found in {start} or any folder above it; run this from the course "
    "repository or pass --course FILE."
)
COURSE_FILE_MISSING = "The course file {path} does not exist; expected a {name} file there."
TOML_SYNTAX = "{path} is not valid TOML: {detail}."
NOT_A_TABLE = "{path} must hold TOML tables ([course], [[components]], ...); got {got}."
SUBMISSION_MISSING = "The submission {path} does not exist; expected a folder."
SUBMISSION_NOT_FOLDER = "The submission {path} is a file; expected the folder of a repository."
NO_PACKAGE = (
    "The submission {path} has no package folder {package_dir}; expected the repository that "
    "contains it (or the {package} package folder itself)."
)

Identifier = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
DottedName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")]
Visibility = Literal["hidden", "after_due_date", "after_published", "visible"]


MAX_SECONDS = 3600  # the longest time limit course.toml may set
MAX_MB = 2**20  # 1 TiB in MiB (1 GiB in KiB): the largest memory or size limit
DEFAULT_VALUE_MB = 256  # runtime.wire.DEFAULT_MAX_BYTES, in MiB (config does not import wire)
MAX_POINTS = 10_000  # a component's points: inf failed inside the grader (H43)


class CourseConfigError(ValueError):
    """The course file cannot be used; the message says where and why, in full sentences."""


class SubmissionError(ValueError):
    """A submission path cannot be graded; the message is one sentence saying why."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CourseSection(_Section):
    name: str = Field(min_length=1)
    package: Identifier
    package_dir: PurePosixPath
    reference_dir: Path | None = None
    visible_tests: Path
    hidden_tests: Path | None = None
    hidden_visibility: Visibility = "after_due_date"
    mistakes: Path | None = None
    mutants: Path | None = None
    variants: Path | None = None

    @field_validator("package_dir")
    @classmethod
    def _relative_inside(cls, value: PurePosixPath) -> PurePosixPath:
        if value.is_absolute() or ".." in value.parts:
            raise ValueError("a relative path inside the repository, without '..'")
        return value

    @field_validator(
        "reference_dir", "visible_tests", "hidden_tests", "mistakes", "mutants", "variants"
    )
    @classmethod
    def _resolve(cls, value: Path | None, info: Any) -> Path | None:
        root = (info.context or {}).get("root")
        if value is None or root is None:
            return value
        return (Path(root) / value).resolve()


class LimitsSection(_Section):
    """The [limits] table: seconds, MiB, KiB and counts, each positive and bounded. Strict:
    true, "16" or 16.0 where a whole number belongs is refused (pydantic's lax mode read true
    as 1), as is inf; a timeout of more than an hour or a memory of more than 1 TiB is a typo."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    test_timeout: float = Field(default=10.0, gt=0, le=MAX_SECONDS, allow_inf_nan=False)
    import_timeout: float = Field(default=20.0, gt=0, le=MAX_SECONDS, allow_inf_nan=False)
    startup_timeout: float = Field(default=60.0, gt=0, le=MAX_SECONDS, allow_inf_nan=False)
    memory_mb: int = Field(default=4096, gt=0, le=MAX_MB)
    output_kb: int = Field(default=16, gt=0, le=MAX_MB)
    hang_strikes: int = Field(default=2, gt=0, le=100)
    #: MiB: the largest value (a result, an argument) that crosses between graders and learner
    #: code at once; what the harness holds of learner outputs is a few times this per test
    value_mb: int = Field(default=DEFAULT_VALUE_MB, gt=0, le=MAX_MB)

    @model_validator(mode="before")
    @classmethod
    def _default_value_within_memory(cls, data: Any) -> Any:
        """value_mb not given: 256, or memory_mb when that is smaller (H45: memory_mb = 128
        left a 256 MiB default no value could reach)."""
        if isinstance(data, dict) and "value_mb" not in data:
            memory = data.get("memory_mb")
            if type(memory) is int and 0 < memory < DEFAULT_VALUE_MB:
                return {**data, "value_mb": memory}
        return data

    @field_validator("value_mb")
    @classmethod
    def _within_memory(cls, value: int, info: Any) -> int:
        memory = info.data.get("memory_mb")
        if memory is not None and value > memory:
            raise ValueError(
                f"at most limits.memory_mb ({memory}): learner code cannot build a value "
                "larger than its whole memory"
            )
        return value


class Component(_Section):
    name: Identifier
    module: DottedName
    title: str = Field(min_length=1)
    points: float = Field(gt=0, le=MAX_POINTS, allow_inf_nan=False, strict=True)  # not "25"
    depends_on: tuple[Identifier, ...] = ()

    @field_validator("name")
    @classmethod
    def _not_reserved(cls, value: str) -> str:
        if value in RESERVED_MARKERS or keyword.iskeyword(value):
            raise ValueError(f"a name that is not reserved ({', '.join(sorted(RESERVED_MARKERS))})")
        return value

    @property
    def module_file(self) -> str:
        """The module's path inside the package, e.g. "multi_head_attention.py"."""
        return self.module.replace(".", "/") + ".py"


def _dependency_cycle(graph: dict[str, tuple[str, ...]]) -> list[str]:
    """A cycle of depends_on as names, first name repeated at the end; [] when there is none."""
    done: set[str] = set()

    def visit(name: str, path: list[str]) -> list[str]:
        if name in path:
            return [*path[path.index(name) :], name]
        if name in done:
            return []
        for other in graph.get(name, ()):
            found = visit(other, [*path, name])
            if found:
                return found
        done.add(name)
        return []

    for name in graph:
        found = visit(name, [])
        if found:
            return found
    return []


class ForbiddenSection(_Section):
    message: str = DEFAULT_FORBIDDEN_MESSAGE
    apis: tuple[DottedName, ...] = ()

    @field_validator("message")
    @classmethod
    def _only_api_placeholder(cls, value: str) -> str:
        fields = {name for _, name, _, _ in string.Formatter().parse(value) if name is not None}
        if fields - {"api"}:
            raise ValueError("a sentence whose only placeholder is {api}")
        return value

    def sentence(self, api: str) -> str:
        """The learner-facing sentence for one forbidden API."""
        return self.message.format(api=api)


class CiSection(_Section):
    """How a learner's CI job is judged. ``pass_rule``: "all" (every test passes) or
    "min_score:N" (a total of at least N points); autograder/github/pass_rule.py reads it.
    The default of `autograder release --pass-rule` and `autograder grade --github`."""

    pass_rule: str = "all"

    @field_validator("pass_rule")
    @classmethod
    def _known_rule(cls, value: str) -> str:
        from autograder.github.pass_rule import PASS_RULE_FORMS, PassRule, PassRuleError

        try:
            PassRule.parse(value)
        except PassRuleError:
            raise ValueError(PASS_RULE_FORMS) from None
        return value.strip()


class CourseConfig(_Section):
    """The whole course file. Build it with load_course(path)."""

    course: CourseSection
    limits: LimitsSection = LimitsSection()
    components: tuple[Component, ...] = Field(min_length=1)
    forbidden: ForbiddenSection = ForbiddenSection()
    ci: CiSection = CiSection()
    path: Path = Field(default=Path(COURSE_FILE), exclude=True)

    @model_validator(mode="after")
    def _unique_components(self) -> CourseConfig:
        for attr in ("name", "module"):
            seen: dict[str, int] = {}
            for index, component in enumerate(self.components):
                value = getattr(component, attr)
                if value in seen:
                    raise ValueError(
                        f"components[{index}].{attr} is {value!r}, already used by "
                        f"components[{seen[value]}]; each component needs its own {attr}"
                    )
                seen[value] = index
        names = [component.name for component in self.components]
        for index, component in enumerate(self.components):
            for other in component.depends_on:
                if other not in names or other == component.name:
                    raise ValueError(
                        f"components[{index}].depends_on names {other!r}; expected the name of "
                        f"another component: {', '.join(n for n in names if n != component.name)}"
                    )
        cycle = _dependency_cycle({c.name: c.depends_on for c in self.components})
        if cycle:
            index = names.index(cycle[0])
            raise ValueError(
                f"components[{index}].depends_on closes a cycle ({' -> '.join(cycle)}); "
                "expected each component to build only on parts that do not build on it, so "
                "that the advice 'fix these first' has an end"
            )
        return self

    @property
    def root(self) -> Path:
        """The folder holding the course file (the instructor's or learner's repository)."""
        return self.path.parent

    @property
    def package(self) -> str:
        return self.course.package

    @property
    def visible_tests(self) -> Path:
        return self.course.visible_tests

    @property
    def hidden_tests(self) -> Path | None:
        return self.course.hidden_tests

    def component(self, name: str) -> Component:
        """The component called name; KeyError with a sentence when there is none."""
        for component in self.components:
            if component.name == name:
                return component
        names = ", ".join(c.name for c in self.components)
        raise KeyError(f"The course has no component {name!r}; expected one of: {names}.")

    def component_for_file(self, file: str | Path) -> Component | None:
        """The component whose module is this file ("multi_head_attention.py",
        "t101/multi_head_attention.py" or an absolute path), or None (e.g. "__init__.py")."""
        parts = PurePosixPath(str(file).replace("\\", "/")).parts
        for component in self.components:
            wanted = PurePosixPath(component.module_file).parts
            if tuple(parts[-len(wanted) :]) == wanted:
                return component
        return None

    def submission_root(self, path: Path) -> Path:
        """The repository a submission path stands for: path itself, or, when path is the
        package folder, the repository around it."""
        path = Path(path).resolve()
        depth = len(self.course.package_dir.parts)
        if not (path / self.course.package_dir).is_dir() and path.parts[-depth:] == tuple(
            self.course.package_dir.parts
        ):
            return path.parents[depth - 1]
        return path

    def package_dir_for(self, path: Path) -> Path:
        """The learner package folder of a submission: `<root>/<package_dir>`, or path itself
        when it already is that folder. SubmissionError with a sentence otherwise."""
        path = Path(path)
        if not path.exists():
            raise SubmissionError(SUBMISSION_MISSING.format(path=path))
        if not path.is_dir():
            raise SubmissionError(SUBMISSION_NOT_FOLDER.format(path=path))
        candidate = path / self.course.package_dir
        if candidate.is_dir():
            return candidate.resolve()
        if path.resolve().name == self.course.package_dir.name:
            return path.resolve()
        raise SubmissionError(
            NO_PACKAGE.format(path=path, package_dir=self.course.package_dir, package=self.package)
        )


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
        raise CourseConfigError(_sentence(path, {"type": "extra_forbidden", "loc": ("path",)}))
    try:
        return CourseConfig.model_validate({**data, "path": path}, context={"root": path.parent})
    except ValidationError as error:
        details = error.errors()
        # A list whose items failed also reports "too short"; the item errors say it better.
        inner = {d["loc"][:1] for d in details if len(d["loc"]) > 1}
        details = [d for d in details if not (d["type"] == "too_short" and d["loc"] in inner)]
        sentences = [_sentence(path, detail) for detail in details]
        raise CourseConfigError(" ".join(sentences)) from None


def _key_path(loc: tuple[Any, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "the top level"


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


def _sentence(path: Path, detail: dict[str, Any]) -> str:
    """One pydantic error as a sentence: file, key path, expected, got."""
    loc = tuple(p for p in detail.get("loc", ()) if p not in ("function-after", "list"))
    key = _key_path(loc)
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
