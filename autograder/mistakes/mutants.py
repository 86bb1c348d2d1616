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
from pathlib import Path, PurePosixPath
from typing import Annotated, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)

from autograder.config import CourseConfig
from autograder.mistakes.catalogue import SLUG_PATTERN, Catalogue, details

M = TypeVar("M", bound=BaseModel)

# Instructor-facing sentences (tests reuse them). {what} is e.g. "mutant attention/no-scale".
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
    "The {what} cannot be applied: its text to find occurs {count} times in {file}; "
    "expected exactly once. Update it after changing the reference."
)
NO_FILE = "The {what} edits {file}, which the reference package {package} does not have."
DEST_EXISTS = "The {what} cannot be written to {dest}: that folder already exists."


class MutantError(ValueError):
    """A mutant (or variant) cannot be read or applied; the message says which and why."""


def _inside_package(file: str | None) -> str | None:
    """An edit's `file`: a relative path inside the package (H43: an absolute path, or one
    with "..", had `autograder check` rewrite the reference itself, or read any file)."""
    if file is None:
        return None
    path = PurePosixPath(file)
    if not file or path.is_absolute() or ".." in path.parts or "\\" in file:
        raise ValueError(
            f"file must be a path inside the reference package, such as 'attention.py'; "
            f"got {file!r}"
        )
    return file


InsideFile = Annotated[str | None, AfterValidator(_inside_package)]


class Edit(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    find: str = Field(min_length=1)
    replace: str
    file: InsideFile = None


class Mutant(BaseModel):
    """One mutant: the full id of the mistake it plants, and its edits of the reference."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mistake: str
    component: str
    edits: tuple[Edit, ...] = Field(min_length=1)


class EditsEntry(BaseModel):
    """The edit part of a mutants or variants file entry: find and replace (and file), or a
    list of edits."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    find: str | None = None
    replace: str | None = None
    file: InsideFile = None
    edits: tuple[Edit, ...] = ()

    @model_validator(mode="after")
    def _one_form(self) -> EditsEntry:
        single = self.find is not None or self.replace is not None
        if single == bool(self.edits):
            raise ValueError("give either find and replace, or a list of edits, not both")
        if single and (self.find is None or self.replace is None):
            raise ValueError("find and replace go together")
        return self

    def edits_for(self, module_file: str) -> tuple[Edit, ...]:
        """The edits, each with its file (module_file, the component's, when none is named)."""
        edits = self.edits or (
            Edit(find=self.find or "", replace=self.replace or "", file=self.file),
        )
        return tuple(e if e.file else e.model_copy(update={"file": module_file}) for e in edits)


class _Entry(EditsEntry):
    mistake: str = Field(pattern=SLUG_PATTERN)


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
            full_id = f"{component.name}/{entry.mistake}"
            if full_id not in catalogue:
                raise MutantError(
                    UNCATALOGUED.format(
                        index=index + 1, path=path, id=full_id, catalogue=catalogue.path
                    )
                )
            edits = entry.edits_for(component.module_file)
            mutants.append(Mutant(mistake=full_id, component=component.name, edits=edits))
    return mutants


def write_mutant(mutant: Mutant, package: Path, dest: Path) -> Path:
    """Copy the reference package folder to dest (which must not exist) and plant the mutant's
    edits in the copy; returns dest. MutantError when an edit does not apply exactly once."""
    return apply_edits(mutant.edits, package, dest, what=f"mutant {mutant.mistake}")


def apply_edits(edits: Sequence[Edit], package: Path, dest: Path, *, what: str) -> Path:
    """Copy the package folder to dest (which must not exist), then apply each edit, in order,
    to the copy; returns dest. MutantError (naming `what`) when an edit's file is missing or
    its text to find does not occur exactly once."""
    dest = Path(dest)
    if dest.exists():
        raise MutantError(DEST_EXISTS.format(what=what, dest=dest))
    shutil.copytree(package, dest, ignore=shutil.ignore_patterns("__pycache__"))
    for edit in edits:
        target = dest / (edit.file or "")
        inside = target.resolve().is_relative_to(dest.resolve())
        if not inside or not target.is_file():
            raise MutantError(NO_FILE.format(what=what, file=edit.file, package=package))
        text = target.read_text(encoding="utf-8")
        count = text.count(edit.find)
        if count != 1:
            raise MutantError(FIND_COUNT.format(what=what, count=count, file=edit.file))
        target.write_text(text.replace(edit.find, edit.replace), encoding="utf-8")
    return dest


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
