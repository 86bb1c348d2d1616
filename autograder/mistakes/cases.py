"""What `autograder check` grades, and what each case must score.

A course's check is a list of cases, each one a learner-like repository (`<package_dir>` inside
a folder) graded with the real pipeline:

* `reference`: the references (course.toml `reference_dir`); every component full marks;
* `stubs`: the learner package as released (`package_dir`); every component zero;
* one per mutant (mutants.py): the references with one catalogued mistake planted (or a
  real-world implementation with one or more); the mistake's component loses points, each
  failing test's feedback names one of its mistakes (`[<id>]`) and each of them is named, and
  every other component keeps full marks, even one that builds on it (`depends_on`): a learner
  must not pay twice for one mistake; a mutant with a `score` must get exactly that score in
  its component;
* one per variant (variants.py): a valid other way to write a reference; full marks;
* one per catalogued mistake that no mutant plants: a failure before any grading.

`plan_cases` reads the course's catalogue, mutants and variants (errors there stop the check:
CheckError, MutantError or CatalogueError, one sentence); `write_case` builds a case's folder
(a mutant or variant whose edits do not apply becomes that case's failure, not the check's).
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from autograder.config import CourseConfig
from autograder.config.sections import IN_COMPONENT
from autograder.mistakes.catalogue import Catalogue, course_catalogue
from autograder.mistakes.mutants import Edit, Mutant, MutantError, apply_edits, load_mutants
from autograder.mistakes.variants import load_variants

Kind = Literal["reference", "stubs", "mutant", "variant", "uncovered"]

NO_REFERENCE = (
    "The course file {path} names no reference_dir; autograder check grades the references, so "
    "it needs them."
)
REFERENCE_MISSING = "The references folder {path} does not exist; check reference_dir in {course}."
MODULE_MISSING = (
    "{course}: {key} is {module!r}, but {folder} has no {file}; expected "
    "the module's path inside the package, dotted (the references and the stubs must both "
    "have it)."
)
STUBS_MISSING = "The learner package {path} does not exist; check package_dir in {course}."
UNKNOWN_COMPONENT = "--component {name} is not a component of {course}; choose from: {names}."
COPY_FAILED = "The {label} could not be copied to {dest}: {error}."
NO_MUTANT = (
    "The catalogued mistake {id} has no mutant, so nothing proves the graders catch it; add one "
    "to {folder}."
)


class CheckError(ValueError):
    """The check cannot run (bad course file or option); the message is one sentence."""


@dataclass(frozen=True)
class Case:
    """One thing to grade (or, for `uncovered`, a failure found without grading).

    key: the case's folder name and batch learner id ("mutant.attention.no-scale");
    label: how the table names it ("reference", "attention/no-scale");
    mistakes: the full ids a mutant must be named by (also set for `uncovered`);
    score: the score its own component must get exactly (None: any, as its kind says)."""

    key: str
    kind: Kind
    label: str
    component: str = ""
    mistakes: tuple[str, ...] = ()
    source: Path | None = None
    edits: tuple[Edit, ...] = ()
    score: float | None = None

    @property
    def mistake(self) -> str:
        """The first mistake a mutant plants ("" for other cases)."""
        return self.mistakes[0] if self.mistakes else ""

    @property
    def graded(self) -> bool:
        return self.kind != "uncovered"


@dataclass(frozen=True)
class Plan:
    """The cases of one check, and what judging them needs."""

    config: CourseConfig
    catalogue: Catalogue
    cases: tuple[Case, ...]
    #: component name -> the components that build on it, transitively (named in feedback).
    dependents: dict[str, frozenset[str]] = field(default_factory=dict)


def plan_cases(config: CourseConfig, components: list[str] | tuple[str, ...] = ()) -> Plan:
    """Every case of the course's check; with components, only the mutants, variants and
    catalogued mistakes of those components (the reference and the stubs are always checked).
    CheckError, CatalogueError or MutantError (one sentence) when the check cannot run."""
    reference, stubs = _course_folders(config, components)
    catalogue = course_catalogue(config)
    mutants_folder = config.course.mutants
    mutants = load_mutants(mutants_folder, config, catalogue) if mutants_folder else []
    variants_folder = config.course.variants
    variants = load_variants(variants_folder, config) if variants_folder else []
    wanted = set(components or [c.name for c in config.components])

    cases = [
        Case("reference", "reference", "reference", source=reference),
        Case("stubs", "stubs", "stubs", source=stubs),
    ]
    for component in config.components:
        if component.name in wanted:
            cases += _component_cases(component.name, mutants, catalogue, reference)
    for variant in variants:
        if variant.component in wanted:
            cases.append(
                Case(
                    key=_key("variant", variant.id, 1),
                    kind="variant",
                    label=variant.id,
                    component=variant.component,
                    source=reference,
                    edits=variant.edits,
                )
            )
    return Plan(config, catalogue, tuple(cases), dependents(config))


def _course_folders(config: CourseConfig, components: Sequence[str]) -> tuple[Path, Path]:
    """The reference and stub folders, each holding every component's module; CheckError
    when a component asked for, a folder or a module is missing."""
    names = [c.name for c in config.components]
    for name in components:
        if name not in names:
            raise CheckError(
                UNKNOWN_COMPONENT.format(name=name, course=config.path, names=", ".join(names))
            )
    reference = config.course.reference_dir
    if reference is None:
        raise CheckError(NO_REFERENCE.format(path=config.path))
    if not reference.is_dir():
        raise CheckError(REFERENCE_MISSING.format(path=reference, course=config.path))
    stubs = config.root / config.course.package_dir
    if not stubs.is_dir():
        raise CheckError(STUBS_MISSING.format(path=stubs, course=config.path))
    for component in config.components:
        for folder in (reference, stubs):
            if not (folder / component.module_file).is_file():  # H43: "softmaxx" passed
                raise CheckError(
                    MODULE_MISSING.format(
                        course=config.path,
                        key=IN_COMPONENT.format(key="module", name=component.name),
                        module=component.module,
                        file=component.module_file,
                        folder=folder,
                    )
                )
    return reference, stubs


def _component_cases(
    component: str, mutants: list[Mutant], catalogue: Catalogue, reference: Path
) -> list[Case]:
    """A component's mutants (numbered when two share a label), then each catalogued mistake
    that no mutant plants alone (an uncovered case)."""
    cases = []
    planted: set[str] = set()  # mistakes planted alone: a mutant proves each of them
    labels: dict[str, int] = {}
    for mutant in (m for m in mutants if m.component == component):
        if len(mutant.mistakes) == 1:
            planted.add(mutant.mistake)
        labels[mutant.label] = labels.get(mutant.label, 0) + 1
        count = labels[mutant.label]
        suffix = f"#{count}" if count > 1 else ""
        cases.append(
            Case(
                key=_key("mutant", mutant.label, count),
                kind="mutant",
                label=mutant.label + suffix,
                component=component,
                mistakes=mutant.mistakes,
                source=reference,
                edits=mutant.edits,
                score=mutant.score,
            )
        )
    for mistake in catalogue.for_component(component):
        if mistake.id not in planted:
            cases.append(
                Case(
                    key=_key("mistake", mistake.id, 1),
                    kind="uncovered",
                    label=mistake.id,
                    component=component,
                    mistakes=(mistake.id,),
                )
            )
    return cases


def uncovered_sentence(plan: Plan, case: Case) -> str:
    folder = plan.config.course.mutants or "the mutants folder named in course.toml"
    return NO_MUTANT.format(id=case.mistake, folder=folder)


def write_case(plan: Plan, case: Case, folder: Path) -> Path:
    """The case's repository: folder/<package_dir> holding its package; returns folder.
    MutantError (a sentence) when a mutant's or variant's edits do not apply."""
    assert case.source is not None, case
    package = folder / plan.config.course.package_dir
    package.parent.mkdir(parents=True, exist_ok=True)
    if case.edits:
        what = f"{case.kind} {case.label}"
        apply_edits(case.edits, case.source, package, what=what)
    else:
        try:
            shutil.copytree(case.source, package, ignore=shutil.ignore_patterns("__pycache__"))
        except OSError as error:
            sentence = COPY_FAILED.format(label=case.label, dest=package, error=error)
            raise MutantError(sentence) from None
    return folder


def dependents(config: CourseConfig) -> dict[str, frozenset[str]]:
    """For each component, the components that build on it (depends_on), transitively."""
    direct = {c.name: set(c.depends_on) for c in config.components}
    found: dict[str, frozenset[str]] = {}
    for name in direct:
        users: set[str] = set()
        frontier = {name}
        while frontier:
            frontier = {u for u, deps in direct.items() if deps & frontier} - users
            users |= frontier
        found[name] = frozenset(users - {name})
    return found


def _key(kind: str, full_id: str, count: int) -> str:
    key = f"{kind}.{full_id.replace('/', '.')}"
    return f"{key}.{count}" if count > 1 else key
