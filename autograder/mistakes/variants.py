"""Variants: valid other ways to write a reference, which the graders must give full marks.

Instructor-only, like mutants (they are edits of the hidden reference). course.toml names their
folder (`[course] variants = "solutions/variants"`), one TOML file per component, named after the
component, in the mutants' edit format with a `name` instead of a `mistake`:

    [[variants]]
    name = "einsum"                                  # slug, unique within the component
    find = "Q @ np.swapaxes(K, -1, -2)"              # reference text occurring exactly once
    replace = "np.einsum('...qd,...kd->...qk', Q, K)"

Any edit of edits.py works: a real-world implementation adapted to the course's API replaces
the whole module file (`source = "../corpus/d2l/add_norm.py"`) and says where it came from
(`origin`, `licence`, `changes`, as mutants do).

A variant's full id is `<component>/<name>`. `autograder check` writes each one with
`write_variant` and expects every component to keep full marks: a grader that fails a correct
alternative (a different but valid order of operations, dtype or layout) is a grader bug.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from autograder.config import CourseConfig
from autograder.mistakes.catalogue import SLUG_PATTERN
from autograder.mistakes.edits import Edit, EditsEntry, MutantError, apply_edits, resolve_sources
from autograder.mistakes.mutants import Provenance, component_files, read_model

# Instructor-facing sentences (tests reuse them).
NO_FOLDER = "The variants folder {path} does not exist; expected a folder of TOML files."
BAD_FILE = "The variants file {path} is not valid: {detail}."
UNKNOWN_FILE = (
    "The variants file {path} is named after no component of the course; expected one of: {names}."
)
DUPLICATE = "The variant {id} is listed twice in {path}; each variant needs its own name."


class Variant(BaseModel):
    """One variant: its full id (`<component>/<name>`) and its edits of the reference."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    component: str
    edits: tuple[Edit, ...] = Field(min_length=1)
    provenance: Provenance = Provenance()


class _Entry(EditsEntry, Provenance):
    name: str = Field(pattern=SLUG_PATTERN)


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    variants: tuple[_Entry, ...] = Field(min_length=1)


def load_variants(folder: Path, config: CourseConfig) -> list[Variant]:
    """Every variant in folder, in course component order; MutantError (a sentence naming the
    file) when the folder, a file or an entry is wrong."""
    files = component_files(folder, config, no_folder=NO_FOLDER, unknown_file=UNKNOWN_FILE)
    variants: list[Variant] = []
    for component in config.components:
        path = files.get(component.name)
        if path is None:
            continue
        for entry in read_model(path, _File, bad_file=BAD_FILE).variants:
            full_id = f"{component.name}/{entry.name}"
            if any(v.id == full_id for v in variants):
                raise MutantError(DUPLICATE.format(id=full_id, path=path))
            edits = resolve_sources(
                entry.edits_for(component.module_file), path, config.root, what=f"variant {full_id}"
            )
            provenance = Provenance(
                origin=entry.origin, licence=entry.licence, changes=entry.changes
            )
            variants.append(
                Variant(id=full_id, component=component.name, edits=edits, provenance=provenance)
            )
    return variants


def write_variant(variant: Variant, package: Path, dest: Path) -> Path:
    """Copy the reference package folder to dest (which must not exist) and apply the
    variant's edits to the copy; returns dest. MutantError when an edit does not apply."""
    return apply_edits(variant.edits, package, dest, what=f"variant {variant.id}")
