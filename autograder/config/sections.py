"""The tables of course.toml, each a frozen pydantic model.

[course], [[components]], [forbidden] and [ci] ([limits] is in limit_rules.py, the whole file in
course_config.py)."""

from __future__ import annotations

import keyword
import string
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: Names a component may not take: they are pytest's own markers or the framework's.
RESERVED_MARKERS = frozenset(
    {"weight", "skip", "skipif", "xfail", "parametrize", "usefixtures", "filterwarnings"}
)

DEFAULT_FORBIDDEN_MESSAGE = (
    "The course asks you to build this yourself; {api} is a library implementation of it, "
    "so this component scores zero."
)

Identifier = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
DottedName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")]
Visibility = Literal["hidden", "after_due_date", "after_published", "visible"]


#: A key inside a [[components]] table, named by the component rather than its index.
IN_COMPONENT = '{key} of component "{name}"'
MAX_POINTS = 10_000  # a component's points: inf failed inside the grader (H43)


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CourseSection(Section):
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
    #: The course's stand-ins file (runtime/shared/standin_registry.py): instructor only.
    standins: Path | None = None

    @field_validator("package_dir")
    @classmethod
    def _relative_inside(cls, value: PurePosixPath) -> PurePosixPath:
        if value.is_absolute() or ".." in value.parts:
            raise ValueError("a relative path inside the repository, without '..'")
        return value

    @field_validator(
        "reference_dir",
        "visible_tests",
        "hidden_tests",
        "mistakes",
        "mutants",
        "variants",
        "standins",
    )
    @classmethod
    def _resolve(cls, value: Path | None, info: Any) -> Path | None:
        root = (info.context or {}).get("root")
        if value is None or root is None:
            return value
        return (Path(root) / value).resolve()


class Component(Section):
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


class ForbiddenSection(Section):
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


class CiSection(Section):
    """How a learner's CI job is judged. ``pass_rule``: "all" (every test passes) or
    "min_score:N" (a total of at least N points); autograder/results/pass_rule.py reads it.
    The default of `autograder release --pass-rule` and `autograder grade --github`."""

    pass_rule: str = "all"

    @field_validator("pass_rule")
    @classmethod
    def _known_rule(cls, value: str) -> str:
        from autograder.results.pass_rule import PASS_RULE_FORMS, PassRule, PassRuleError

        try:
            PassRule.parse(value)
        except PassRuleError:
            raise ValueError(PASS_RULE_FORMS) from None
        return value.strip()
