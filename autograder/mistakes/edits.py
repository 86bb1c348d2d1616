"""Edits of a reference package: how a mutant or a variant is written from the references.

Three kinds of edit, each on one file of the package (`file`, a path inside it; default the
component's module file):

* text: `find` (text that occurs exactly once in the file) and `replace`;
* whole file: `source`, a file of the course (a path relative to the TOML file that names it,
  inside the course folder) that replaces the package's file, e.g. a real-world implementation
  adapted to the course's API;
* definitions: `source` with `only = ["SelfAttention"]`: those top-level functions or classes of
  the package's file are replaced by the source's definitions of the same names, and the
  source's top-level imports that the file lacks are added after its own (so that one class of
  a module can come from elsewhere while the rest stays the reference's).

`apply_edits` copies the package and applies a list of edits in order; MutantError (a sentence
naming the mutant or variant) when an edit does not apply.
"""

from __future__ import annotations

import ast
import shutil
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

# Instructor-facing sentences (tests reuse them). {what} is e.g. "mutant attention/no-scale".
FIND_COUNT = (
    "The {what} cannot be applied: its text to find occurs {count} times in {file}; "
    "expected exactly once. Update it after changing the reference."
)
NO_FILE = "The {what} edits {file}, which the reference package {package} does not have."
DEST_EXISTS = "The {what} cannot be written to {dest}: that folder already exists."
SOURCE_MISSING = (
    "The {what} takes {source}, which is not a file inside the course folder {root}; expected "
    "a path relative to the TOML file that names it."
)
NO_DEFINITION = (
    "The {what} replaces the definition {name} of {file}, but {where} has no top-level "
    "function or class of that name."
)
NOT_PYTHON = "The {what} cannot be applied: {file} is not valid Python ({error})."


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
    """One edit: find/replace text, or take a whole file (or some definitions) from `source`
    (resolved by `resolve_sources` to an absolute path inside the course folder)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    find: str | None = Field(default=None, min_length=1)
    replace: str | None = None
    source: str | None = Field(default=None, min_length=1)
    only: tuple[str, ...] = ()
    file: InsideFile = None

    @model_validator(mode="after")
    def _one_kind(self) -> Edit:
        _check_kind(self.find, self.replace, self.source, self.only)
        return self


def _check_kind(find: object, replace: object, source: object, only: object) -> None:
    """ValueError unless exactly one kind of edit is given: find and replace, or source."""
    text = find is not None or replace is not None
    if text == (source is not None):
        raise ValueError("give either find and replace, or a source file, not both")
    if text and (find is None or replace is None):
        raise ValueError("find and replace go together")
    if only and source is None:
        raise ValueError("only names definitions of a source file; give source too")


class EditsEntry(BaseModel):
    """The edit part of a mutants or variants file entry: find and replace (and file), a
    source (and only, and file), or a list of edits."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    find: str | None = None
    replace: str | None = None
    source: str | None = None
    only: tuple[str, ...] = ()
    file: InsideFile = None
    edits: tuple[Edit, ...] = ()

    @model_validator(mode="after")
    def _one_form(self) -> EditsEntry:
        single = self.find is not None or self.replace is not None or self.source is not None
        if single == bool(self.edits):
            raise ValueError("give either find and replace, or a list of edits, not both")
        if single:
            _check_kind(self.find, self.replace, self.source, self.only)
        return self

    def edits_for(self, module_file: str) -> tuple[Edit, ...]:
        """The edits, each with its file (module_file, the component's, when none is named)."""
        fields = ("find", "replace", "source", "only", "file")
        edits = self.edits or (Edit(**{name: getattr(self, name) for name in fields}),)
        return tuple(e if e.file else e.model_copy(update={"file": module_file}) for e in edits)


def resolve_sources(
    edits: Sequence[Edit], toml_file: Path, root: Path, *, what: str
) -> tuple[Edit, ...]:
    """The edits with each `source` made absolute (read relative to the folder of toml_file);
    MutantError (SOURCE_MISSING) when one is not a file inside the course folder root."""
    resolved = []
    for edit in edits:
        if edit.source is not None:
            path = (Path(toml_file).parent / edit.source).resolve()
            if not path.is_relative_to(Path(root).resolve()) or not path.is_file():
                raise MutantError(SOURCE_MISSING.format(what=what, source=edit.source, root=root))
            edit = edit.model_copy(update={"source": str(path)})
        resolved.append(edit)
    return tuple(resolved)


def apply_edits(edits: Sequence[Edit], package: Path, dest: Path, *, what: str) -> Path:
    """Copy the package folder to dest (which must not exist), then apply each edit, in order,
    to the copy; returns dest. MutantError (naming `what`) when an edit's file is missing, its
    text to find does not occur exactly once or a definition it replaces is not there."""
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
        if edit.source is None:
            count = text.count(edit.find or "")
            if count != 1:
                raise MutantError(FIND_COUNT.format(what=what, count=count, file=edit.file))
            text = text.replace(edit.find or "", edit.replace or "")
        elif not edit.only:
            text = Path(edit.source).read_text(encoding="utf-8")
        else:
            source = Path(edit.source).read_text(encoding="utf-8")
            text = replace_definitions(text, source, edit.only, file=edit.file or "", what=what)
        target.write_text(text, encoding="utf-8")
    return dest


def replace_definitions(
    text: str, source: str, names: Sequence[str], *, file: str, what: str
) -> str:
    """`text` (a module) with its top-level definitions `names` replaced by `source`'s, and the
    source's top-level imports it lacks added after its own last import."""
    tree, source_tree = _parse(text, file, what), _parse(source, "the source", what)
    lines, source_lines = text.splitlines(keepends=True), source.splitlines(keepends=True)
    spans = []
    for name in names:
        mine = _definition(tree, name, file=file, where=file, what=what)
        theirs = _definition(source_tree, name, file=file, where="its source", what=what)
        spans.append((_span(mine), "".join(source_lines[slice(*_span(theirs))])))
    for (start, stop), new in sorted(spans, reverse=True):
        lines[start:stop] = [new]
    imports = [node for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)]
    have = {ast.unparse(node) for node in imports}
    missing = [
        ast.unparse(node) + "\n"
        for node in source_tree.body
        if isinstance(node, ast.Import | ast.ImportFrom) and ast.unparse(node) not in have
    ]
    at = imports[-1].end_lineno or 0 if imports else 0
    return "".join(lines[:at] + missing + lines[at:]) if missing else "".join(lines)


def _parse(text: str, file: str, what: str) -> ast.Module:
    try:
        return ast.parse(text)
    except SyntaxError as error:
        raise MutantError(NOT_PYTHON.format(what=what, file=file, error=error.msg)) from None


def _definition(tree: ast.Module, name: str, *, file: str, where: str, what: str) -> ast.stmt:
    for node in tree.body:
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        if isinstance(node, kinds) and node.name == name:
            return node
    raise MutantError(NO_DEFINITION.format(what=what, name=name, file=file, where=where))


def _span(node: ast.stmt) -> tuple[int, int]:
    """(first line index, one past the last) of a definition, its decorators included."""
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
    return first - 1, node.end_lineno or node.lineno
