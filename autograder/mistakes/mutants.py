"""Mutants: the reference implementation with exactly one catalogued mistake planted in it.

Instructor-only (they are edits of the hidden reference, so they never ship). course.toml names
their folder (`[course] mutants = "solutions/mutants"`), one TOML file per component, named after
the component like the catalogue's files:

    [[mutants]]
    mistake = "no-scale"            # the slug of a mistake in mistakes/<component>.toml
    find = "/ np.sqrt(d_k)"         # reference text that occurs exactly once in the file
    replace = ""                    # what the mistaken code has instead
    # file = "attention.py"         # optional: a file inside the package; default the
    #                               # component's module file

A mutant that needs several edits lists them instead: `edits = [{find = ..., replace = ...}, ...]`
(each may name its own `file`). `write_mutant` copies the reference package and applies the
edits; `autograder check` grades the copy and expects the mistake's own component to lose
points, with the mistake's id in the feedback.
"""

from __future__ import annotations

import shutil
import tomllib
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from autograder.config import CourseConfig
from autograder.mistakes.catalogue import SLUG_PATTERN, Catalogue

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
FIND_COUNT = (
    "The mutant {id} cannot be planted: its text to find occurs {count} times in {file}; "
    "expected exactly once. Update the mutant after changing the reference."
)
NO_FILE = "The mutant {id} edits {file}, which the reference package {package} does not have."


class MutantError(ValueError):
    """A mutant cannot be read or planted; the message says which and why."""


class Edit(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    find: str = Field(min_length=1)
    replace: str
    file: str | None = None


class Mutant(BaseModel):
    """One mutant: the full id of the mistake it plants, and its edits of the reference."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mistake: str
    component: str
    edits: tuple[Edit, ...] = Field(min_length=1)


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    mistake: str = Field(pattern=SLUG_PATTERN)
    find: str | None = None
    replace: str | None = None
    file: str | None = None
    edits: tuple[Edit, ...] = ()

    @model_validator(mode="after")
    def _one_form(self) -> _Entry:
        single = self.find is not None or self.replace is not None
        if single == bool(self.edits):
            raise ValueError("give either find and replace, or a list of edits, not both")
        if single and (self.find is None or self.replace is None):
            raise ValueError("find and replace go together")
        return self

    def all_edits(self) -> tuple[Edit, ...]:
        if self.edits:
            return self.edits
        return (Edit(find=self.find or "", replace=self.replace or "", file=self.file),)


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    mutants: tuple[_Entry, ...] = Field(min_length=1)


def load_mutants(folder: Path, config: CourseConfig, catalogue: Catalogue) -> list[Mutant]:
    """Every mutant in folder, in course component order; MutantError when one is wrong."""
    folder = Path(folder)
    if not folder.is_dir():
        raise MutantError(NO_FOLDER.format(path=folder))
    names = [c.name for c in config.components]
    files = {path.stem: path for path in sorted(folder.glob("*.toml"))}
    for stem, path in files.items():
        if stem not in names:
            raise MutantError(UNKNOWN_FILE.format(path=path, names=", ".join(names)))
    mutants = []
    for component in config.components:
        path = files.get(component.name)
        if path is None:
            continue
        for index, entry in enumerate(_read(path).mutants):
            full_id = f"{component.name}/{entry.mistake}"
            if full_id not in catalogue:
                raise MutantError(
                    UNCATALOGUED.format(
                        index=index + 1, path=path, id=full_id, catalogue=catalogue.path
                    )
                )
            edits = tuple(
                edit if edit.file else edit.model_copy(update={"file": component.module_file})
                for edit in entry.all_edits()
            )
            mutants.append(Mutant(mistake=full_id, component=component.name, edits=edits))
    return mutants


def write_mutant(mutant: Mutant, package: Path, dest: Path) -> Path:
    """Copy the reference package folder to dest (which must not exist) and plant the mutant's
    edits in the copy; returns dest. MutantError when an edit does not apply exactly once."""
    shutil.copytree(package, dest, ignore=shutil.ignore_patterns("__pycache__"))
    for edit in mutant.edits:
        target = dest / (edit.file or "")
        if not target.is_file():
            raise MutantError(NO_FILE.format(id=mutant.mistake, file=edit.file, package=package))
        text = target.read_text(encoding="utf-8")
        count = text.count(edit.find)
        if count != 1:
            raise MutantError(FIND_COUNT.format(id=mutant.mistake, count=count, file=edit.file))
        target.write_text(text.replace(edit.find, edit.replace), encoding="utf-8")
    return dest


def mutants_by_component(mutants: Sequence[Mutant]) -> dict[str, list[Mutant]]:
    found: dict[str, list[Mutant]] = {}
    for mutant in mutants:
        found.setdefault(mutant.component, []).append(mutant)
    return found


def _read(path: Path) -> _File:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise MutantError(BAD_FILE.format(path=path, detail=error)) from None
    try:
        return _File.model_validate(data)
    except ValidationError as error:
        details = "; ".join(
            f"{'.'.join(str(p) for p in d['loc']) or 'the file'}: {d['msg'].lower()}"
            for d in error.errors()
        )
        raise MutantError(BAD_FILE.format(path=path, detail=details)) from None
