"""The catalogue of known mistakes: what each one is called, how to explain it, where to read.

A course keeps its catalogue in a folder (course.toml `[course] mistakes = "mistakes"`), one TOML
file per component, named after the component (`mistakes/attention.toml`). It ships to learners:
it holds explanations only, never code. Each file is a list of tables:

    [[mistakes]]
    id = "no-scale"                  # stable slug: lowercase letters, digits and hyphens
    title = "Scores not scaled"      # a few words, for tables
    explanation = "your scores are not scaled; divide Q K^T by sqrt(d_k) before the softmax"
    notes = 'Class 06, "Why scaling comes before softmax"'   # the course-note section to read

A mistake's full id is `<component>/<slug>`, e.g. `attention/no-scale`. Graders name a mistake
with `Catalogue.sentence(id)`; `autograder check` looks for that id in the feedback a mutant gets.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from autograder.config import CourseConfig
from autograder.results.mistake_tags import SENTENCE

SLUG_PATTERN = r"^[a-z0-9]+(-[a-z0-9]+)*$"

# Instructor-facing sentences (tests reuse them).
NO_FOLDER = "The mistakes catalogue {path} does not exist; expected a folder of TOML files."
UNKNOWN_COMPONENT_FILE = (
    "The catalogue file {path} is named after no component of the course; expected one of: {names}."
)
BAD_FILE = "The catalogue file {path} is not valid: {detail}."
DUPLICATE = "The mistake {id} is catalogued twice in {path}; each id must be unique."
UNKNOWN_ID = "No known mistake is catalogued as {id!r}; check the id against the catalogue {path}."


class CatalogueError(ValueError):
    """The catalogue cannot be used; the message says which file and why, in full sentences."""


class Mistake(BaseModel):
    """One known mistake. `id` is the full id, `<component>/<slug>`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    component: str
    title: str = Field(min_length=1)
    explanation: str = Field(min_length=1)
    notes: str = Field(min_length=1)

    @property
    def sentence(self) -> str:
        """The learner-facing sentence that names this mistake, its fix and where to read."""
        explanation = self.explanation.strip()
        if not explanation.endswith((".", "!", "?")):
            explanation += "."
        explanation = explanation[0].upper() + explanation[1:]
        return SENTENCE.format(id=self.id, explanation=explanation, notes=self.notes.strip())


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=SLUG_PATTERN)
    title: str = Field(min_length=1)
    explanation: str = Field(min_length=1)
    notes: str = Field(min_length=1)


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    mistakes: tuple[_Entry, ...] = Field(min_length=1)


class Catalogue:
    """The known mistakes of a course, by full id, in file then entry order."""

    def __init__(self, mistakes: Sequence[Mistake], path: Path) -> None:
        self.path = path
        self._by_id = {mistake.id: mistake for mistake in mistakes}

    def __iter__(self) -> Iterator[Mistake]:
        return iter(self._by_id.values())

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, mistake_id: object) -> bool:
        return mistake_id in self._by_id

    def get(self, mistake_id: str) -> Mistake:
        """The mistake with this full id; CatalogueError (a sentence) when there is none."""
        try:
            return self._by_id[mistake_id]
        except KeyError:
            raise CatalogueError(UNKNOWN_ID.format(id=mistake_id, path=self.path)) from None

    def sentence(self, mistake_id: str) -> str:
        """The learner-facing sentence naming this mistake (see Mistake.sentence)."""
        return self.get(mistake_id).sentence

    def for_component(self, component: str) -> list[Mistake]:
        return [m for m in self if m.component == component]


def load_catalogue(folder: Path, components: Sequence[str]) -> Catalogue:
    """Read every `<component>.toml` in folder; CatalogueError (full sentences) when one is
    wrong. components: the course's component names, in course order."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CatalogueError(NO_FOLDER.format(path=folder))
    mistakes: list[Mistake] = []
    seen: set[str] = set()
    files = {path.stem: path for path in sorted(folder.glob("*.toml"))}
    for stem, path in files.items():
        if stem not in components:
            raise CatalogueError(
                UNKNOWN_COMPONENT_FILE.format(path=path, names=", ".join(components))
            )
    for component in components:
        path = files.get(component)
        if path is None:
            continue
        for entry in _read(path).mistakes:
            full_id = f"{component}/{entry.id}"
            if full_id in seen:
                raise CatalogueError(DUPLICATE.format(id=full_id, path=path))
            seen.add(full_id)
            mistakes.append(
                Mistake(component=component, **entry.model_dump(exclude={"id"}), id=full_id)
            )
    return Catalogue(mistakes, folder)


def _read(path: Path) -> _File:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise CatalogueError(BAD_FILE.format(path=path, detail=error)) from None
    try:
        return _File.model_validate(data)
    except ValidationError as error:
        raise CatalogueError(BAD_FILE.format(path=path, detail=details(error))) from None


def details(error: ValidationError) -> str:
    """A validation error as `where: what` clauses joined by '; '. A slug that does not match
    says what a slug is; a list's "too short" that only echoes its bad entries is left out."""
    problems = error.errors()
    locations = [tuple(p["loc"]) for p in problems]
    clauses = []
    for problem, loc in zip(problems, locations, strict=True):
        if problem["type"] == "too_short" and any(
            other[: len(loc)] == loc and other != loc for other in locations
        ):
            continue
        if problem["type"] == "string_pattern_mismatch":
            what = f"expected a slug (lowercase letters, digits, hyphens); got {problem['input']!r}"
        else:
            what = problem["msg"].lower()
        clauses.append(f"{'.'.join(str(p) for p in loc) or 'the file'}: {what}")
    return "; ".join(clauses)


def course_catalogue(config: CourseConfig) -> Catalogue:
    """The catalogue course.toml names (`[course] mistakes`); an empty one when it names none."""
    folder = config.course.mistakes
    if folder is None:
        return Catalogue([], config.root)
    return load_catalogue(folder, [c.name for c in config.components])
