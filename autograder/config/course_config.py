"""CourseConfig: the whole course file, and where a submission's package folder is."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from pydantic import Field, model_validator

from autograder import learner_files
from autograder.config.limit_rules import LimitsSection
from autograder.config.notebook_section import NotebookSection
from autograder.config.sections import (
    IN_COMPONENT,
    CiSection,
    Component,
    CourseSection,
    ForbiddenSection,
    Section,
)
from autograder.gradebook.late import LatePolicy

COURSE_FILE = "course.toml"
SUBMISSION_MISSING = "The submission {path} does not exist; expected a folder."
SUBMISSION_NOT_FOLDER = "The submission {path} is a file; expected the folder of a repository."
NO_PACKAGE = (
    "The submission {path} has no package folder {package_dir}; expected the repository that "
    "contains it (or the {package} package folder itself)."
)


class CourseConfigError(ValueError):
    """The course file cannot be used; the message says where and why, in full sentences."""


class SubmissionError(ValueError):
    """A submission path cannot be graded; the message is one sentence saying why."""


class SubmissionLink(SubmissionError):
    """The package folder, or a folder above it inside the submission, is a symbolic link
    (learner_files.LINK_REFUSED): refused, never followed, and no other folder is looked for."""


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


class CourseConfig(Section):
    """The whole course file. Build it with load_course(path)."""

    course: CourseSection
    limits: LimitsSection = LimitsSection()
    components: tuple[Component, ...] = Field(min_length=1)
    forbidden: ForbiddenSection = ForbiddenSection()
    ci: CiSection = CiSection()
    late: LatePolicy | None = None  # [late]: grade-class --deadline's late window (late.py)
    notebook: NotebookSection = NotebookSection()
    path: Path = Field(default=Path(COURSE_FILE), exclude=True)

    @model_validator(mode="after")
    def _unique_components(self) -> CourseConfig:
        for attr in ("name", "module"):
            seen: dict[str, int] = {}
            for index, component in enumerate(self.components):
                value = getattr(component, attr)
                if value in seen and attr == "name":  # the index is all that tells them apart
                    raise ValueError(
                        f"components[{index}].name is {value!r}, already used by "
                        f"components[{seen[value]}]; each component needs its own name"
                    )
                if value in seen:
                    first = self.components[seen[value]].name
                    raise ValueError(
                        f"{IN_COMPONENT.format(key=attr, name=component.name)} is {value!r}, "
                        f'already used by component "{first}"; each component needs its own '
                        f"{attr}"
                    )
                seen[value] = index
        names = [component.name for component in self.components]
        for component in self.components:
            for other in component.depends_on:
                if other not in names or other == component.name:
                    raise ValueError(
                        f"{IN_COMPONENT.format(key='depends_on', name=component.name)} names "
                        f"{other!r}; expected the name of "
                        f"another component: {', '.join(n for n in names if n != component.name)}"
                    )
        cycle = _dependency_cycle({c.name: c.depends_on for c in self.components})
        if cycle:
            raise ValueError(
                f"{IN_COMPONENT.format(key='depends_on', name=cycle[0])} closes a cycle "
                f"({' -> '.join(cycle)}); "
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
        root = path.resolve()  # the folder named, as given; below it no link is followed
        try:
            os.close(learner_files.open_folder(root, self.course.package_dir))
            return root / self.course.package_dir
        except learner_files.LinkRefused as error:
            raise SubmissionLink(error.sentence) from None
        except (FileNotFoundError, NotADirectoryError):
            pass
        if root.name == self.course.package_dir.name:
            return root
        raise SubmissionError(
            NO_PACKAGE.format(path=path, package_dir=self.course.package_dir, package=self.package)
        )
