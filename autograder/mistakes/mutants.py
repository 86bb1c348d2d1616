"""Mutants: the reference implementation with a catalogued mistake planted in it.

Instructor-only (edits of the hidden reference, so they never ship). course.toml names their
folder (`[course] mutants = "solutions/mutants"`), one TOML file per component, named like the
catalogue's files. An entry names its `mistake` (a slug of mistakes/<component>.toml) or, for a
real-world implementation, its `mistakes` (each must be named), and its edits: `find`/`replace`,
`edits = [...]` or `source` (edits.py lists every kind).

`write_mutant` copies the reference package and applies the edits; `autograder check` grades
the copy and expects the mistake's own component to lose points, with the id of one of its
mistakes in each failing test's feedback and each of its mistakes in some.

Keys: docs/author/mistakes.md#2-plant-it-in-a-mutant. Design:
docs/internals/notebook-mistakes.md#mutants.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from autograder.config import CourseConfig
from autograder.mistakes.catalogue import SLUG_PATTERN, Catalogue, details
from autograder.mistakes.edits import (
    DEST_EXISTS,
    FIND_COUNT,
    NO_FILE,
    Edit,
    EditsEntry,
    MutantError,
    apply_edits,
    resolve_sources,
)

__all__ = [  # the edit names moved to edits.py; still importable here
    "DEST_EXISTS",
    "FIND_COUNT",
    "NO_FILE",
    "Edit",
    "EditsEntry",
    "Mutant",
    "MutantError",
    "Provenance",
    "apply_edits",
    "component_files",
    "load_mutants",
    "read_model",
    "write_mutant",
]

M = TypeVar("M", bound=BaseModel)

# Instructor-facing sentences (tests reuse them).
NO_FOLDER = "The mutants folder {path} does not exist; expected a folder of TOML files."
BAD_FILE = "The mutants file {path} is not valid: {detail}."
UNKNOWN_FILE = (
    "The mutants file {path} is named after no component of the course; expected one of: {names}."
)
UNCATALOGUED = (
    "The mutant {index} in {path} plants {id}, which the catalogue {catalogue} does not list; "
    "add the mistake there first."
)


class Provenance(BaseModel):
    """Where a real-world implementation came from (a mutant or variant taken from public
    code): `origin` (its URL and file), `licence`, and `changes`, what was changed to fit the
    course's API. All three, or none."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    origin: str | None = Field(default=None, min_length=1)
    licence: str | None = Field(default=None, min_length=1)
    changes: str | None = Field(default=None, min_length=1)

    @model_validator(mode="after")
    def _all_or_none(self) -> Provenance:
        given = [v is not None for v in (self.origin, self.licence, self.changes)]
        if any(given) and not all(given):
            raise ValueError("origin, licence and changes go together")
        return self


class Mutant(BaseModel):
    """One mutant: the full ids of the mistakes it plants (one for a planted mutant; a real-world
    implementation may have several), its edits of the reference, and, optionally, its name
    (the check's label; default the mistake's id), where it came from and the score its own
    component must get."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mistakes: tuple[str, ...] = Field(min_length=1)
    component: str
    edits: tuple[Edit, ...] = Field(min_length=1)
    name: str = ""
    provenance: Provenance = Provenance()
    score: float | None = None

    @property
    def mistake(self) -> str:
        """The first (for most mutants, the only) mistake it plants."""
        return self.mistakes[0]

    @property
    def label(self) -> str:
        return f"{self.component}/{self.name}" if self.name else self.mistake


class _Entry(EditsEntry, Provenance):
    mistake: str | None = Field(default=None, pattern=SLUG_PATTERN)
    mistakes: tuple[Annotated[str, Field(pattern=SLUG_PATTERN)], ...] = ()
    name: str | None = Field(default=None, pattern=SLUG_PATTERN)
    score: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _one_mistake_form(self) -> _Entry:
        if (self.mistake is None) == (not self.mistakes):
            raise ValueError("give either mistake or a list of mistakes, not both")
        return self

    @property
    def slugs(self) -> tuple[str, ...]:
        return (self.mistake,) if self.mistake else self.mistakes


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    mutants: tuple[_Entry, ...] = Field(min_length=1)


def load_mutants(folder: Path, config: CourseConfig, catalogue: Catalogue) -> list[Mutant]:
    """Every mutant in folder, in course component order; MutantError when one is wrong."""
    files = component_files(folder, config, no_folder=NO_FOLDER, unknown_file=UNKNOWN_FILE)
    mutants = []
    for component in config.components:
        path = files.get(component.name)
        if path is None:
            continue
        for index, entry in enumerate(read_model(path, _File, bad_file=BAD_FILE).mutants):
            full_ids = tuple(f"{component.name}/{slug}" for slug in entry.slugs)
            for full_id in full_ids:
                if full_id not in catalogue:
                    raise MutantError(
                        UNCATALOGUED.format(
                            index=index + 1, path=path, id=full_id, catalogue=catalogue.path
                        )
                    )
            label = f"{component.name}/{entry.name}" if entry.name else full_ids[0]
            what = f"mutant {label}"
            edits = resolve_sources(
                entry.edits_for(component.module_file), path, config.root, what=what
            )
            mutants.append(
                Mutant(
                    mistakes=full_ids,
                    component=component.name,
                    edits=edits,
                    name=entry.name or "",
                    provenance=Provenance(
                        origin=entry.origin, licence=entry.licence, changes=entry.changes
                    ),
                    score=entry.score,
                )
            )
    return mutants


def write_mutant(mutant: Mutant, package: Path, dest: Path) -> Path:
    """Copy the reference package folder to dest (which must not exist) and plant the mutant's
    edits in the copy; returns dest. MutantError when an edit does not apply exactly once."""
    return apply_edits(mutant.edits, package, dest, what=f"mutant {mutant.label}")


def mutants_by_component(mutants: Sequence[Mutant]) -> dict[str, list[Mutant]]:
    found: dict[str, list[Mutant]] = {}
    for mutant in mutants:
        found.setdefault(mutant.component, []).append(mutant)
    return found


def component_files(
    folder: Path, config: CourseConfig, *, no_folder: str, unknown_file: str
) -> dict[str, Path]:
    """`<component>.toml` files of folder by component name; MutantError (no_folder or
    unknown_file, formatted with path and names) when the folder is missing or a file is named
    after no component."""
    folder = Path(folder)
    if not folder.is_dir():
        raise MutantError(no_folder.format(path=folder))
    names = [c.name for c in config.components]
    files = {path.stem: path for path in sorted(folder.glob("*.toml"))}
    for stem, path in files.items():
        if stem not in names:
            raise MutantError(unknown_file.format(path=path, names=", ".join(names)))
    return files


def read_model(path: Path, model: type[M], *, bad_file: str) -> M:
    """path's TOML validated as model; MutantError (bad_file with path and detail) if not."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise MutantError(bad_file.format(path=path, detail=error)) from None
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise MutantError(bad_file.format(path=path, detail=details(error))) from None
