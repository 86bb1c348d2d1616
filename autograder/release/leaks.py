"""Leak checks: a release must hold nothing of the references, the stand-ins or the hidden tests.

* A reference or stand-in body: any function or method whose body (docstring removed, compared
  as an `ast` dump) equals one in the reference folder or the course's stand-ins file, unless
  the stub of the same name has that same body (e.g. a trivial one both share).
* A numerically stable softmax: a function that exponentiates its input minus its maximum along
  an axis and divides by the sum along an axis (`np.exp(x - x.max(axis, keepdims=True)) /
  ...sum(axis, keepdims=True)`), in any module: written anew, it is still an answer (a softmax
  is the first component of a course like this one), whatever the references say.
* A hidden test's name: a `test_*` function or a test file name found only in the hidden
  tests (a name the visible tests also use is public anyway).
* A path under an instructor-only folder (references, hidden tests), or an instructor-only file
  (the stand-ins).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from autograder.release.stable_softmax import stable_softmaxes

REFERENCE_BODY = (
    "The release would contain the body of the {what} {name} (from {source}) in {path}; "
    "a learner must never receive reference code, so the release was not written."
)
STABLE_SOFTMAX = (
    "The release would contain a complete, numerically stable softmax ({name} in {path}), "
    "the answer to a component; a learner must never receive one, so the release was not "
    "written."
)
HIDDEN_NAME = (
    "The release would mention the hidden test name {name!r} in {path}; hidden tests must "
    "stay secret, so the release was not written."
)
PRIVATE_PATH = (
    "The release would contain {path}, which is under the instructor-only folder {folder}; "
    "the release was not written."
)
PRIVATE_FILE = (
    "The release would contain the instructor-only file {path}; the release was not written."
)
_TEST_NAME = re.compile(r"^\s*(?:async\s+)?def\s+(test_\w+)", re.MULTILINE)


def body_dumps(source: str) -> dict[str, str]:
    """{ast dump of a function body: function name} for every function in source."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    dumps = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                body = body[1:]  # the docstring
            if body:
                dumps[ast.dump(ast.Module(body=body, type_ignores=[]))] = node.name
    return dumps


def reference_bodies(reference_dir: Path, stub_dir: Path) -> dict[str, tuple[str, str, str]]:
    """{body dump: (name, reference file, "reference")} of reference bodies the stubs do not
    share."""
    files = sorted(Path(reference_dir).rglob("*.py"))
    return _bodies(files, stub_dir, "reference")


def standin_bodies(standins: Path, stub_dir: Path) -> dict[str, tuple[str, str, str]]:
    """{body dump: (name, file, "stand-in")} of the course's stand-ins file's bodies."""
    return _bodies([Path(standins)], stub_dir, "stand-in")


def _bodies(files: list[Path], stub_dir: Path, what: str) -> dict[str, tuple[str, str, str]]:
    shared: set[str] = set()
    for stub in sorted(Path(stub_dir).rglob("*.py")):
        shared.update(body_dumps(stub.read_text(encoding="utf-8")))
    bodies = {}
    for file in files:
        for dump, name in body_dumps(file.read_text(encoding="utf-8")).items():
            if dump not in shared:
                bodies[dump] = (name, file.name, what)
    return bodies


def hidden_names(hidden_dir: Path, visible_dir: Path) -> set[str]:
    """Test function and test file names that only the hidden tests use."""

    def names(folder: Path) -> set[str]:
        found: set[str] = set()
        for file in Path(folder).rglob("test_*.py"):
            found.add(file.stem)
            found.update(_TEST_NAME.findall(file.read_text(encoding="utf-8")))
        return found

    return names(hidden_dir) - names(visible_dir)


def find_leaks(
    files: Mapping[str, bytes],
    *,
    bodies: Mapping[str, tuple[str, str, str]],
    secret_names: Iterable[str],
    private_folders: Iterable[str],
) -> list[str]:
    """One sentence per leak found in files ({POSIX path: bytes}), in path order.
    private_folders: instructor-only folders, or files (a path equal to one is refused too)."""
    problems = []
    names = sorted(set(secret_names))
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b") if names else None
    folders = [f.rstrip("/") for f in private_folders]
    for path in sorted(files):
        for folder in folders:
            if path == folder:
                problems.append(PRIVATE_FILE.format(path=path))
            elif path.startswith(folder + "/"):
                problems.append(PRIVATE_PATH.format(path=path, folder=folder))
        text = files[path].decode("utf-8", errors="replace")
        if path.endswith(".py"):
            for dump in body_dumps(text):
                if dump in bodies:
                    name, source, what = bodies[dump]
                    problems.append(
                        REFERENCE_BODY.format(what=what, name=name, source=source, path=path)
                    )
            for name in stable_softmaxes(text):
                problems.append(STABLE_SOFTMAX.format(name=name, path=path))
        found = pattern.search(text) if pattern else None
        if found:
            problems.append(HIDDEN_NAME.format(name=found.group(1), path=path))
    return problems
