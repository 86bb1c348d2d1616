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


def stable_softmaxes(source: str) -> list[str]:
    """The functions of `source` that compute a numerically stable softmax: `exp(a - m)`, `m`
    a maximum taken along an axis (a call of max/amax/nanmax with an axis or keepdims, or the
    `.max(...)` method with one), divided (`/`, `/=`, `divide`, `div`) by something holding a
    `sum` (function or method) taken along an axis. A name assigned in the function stands for
    what its values were computed from (`m = x.max(-1, keepdims=True)`, `m = np.where(m == -inf,
    0, m)`, `e = np.exp(x - m)`, `total = e.sum(-1)`, `np.divide(e, total, ...)`)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _stable_softmax(node)
    ]


def _stable_softmax(function: ast.AST) -> bool:
    assigned: list[tuple[list[str], ast.AST]] = []  # (names, the expression they come from)
    for node in ast.walk(function):
        if isinstance(node, ast.Assign):
            names = [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
            assigned.append((names, node.value))
        elif isinstance(node, ast.AugAssign | ast.AnnAssign) and node.value is not None:
            if isinstance(node.target, ast.Name):
                assigned.append(([node.target.id], node.value))

    def derived(direct) -> set[str]:
        """The names whose value holds a node for which `direct(node, names)` holds."""
        names: set[str] = set()
        while True:
            more = {
                n for targets, value in assigned if _holds(value, direct, names) for n in targets
            }
            if more <= names:
                return names
            names |= more

    def is_max(node: ast.AST, names: set[str]) -> bool:
        return _axis_call(node, {"max", "amax", "nanmax"}, walk=False)

    maxima = derived(is_max)

    def is_shift(node: ast.AST, names: set[str]) -> bool:
        return (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Sub)
            and _holds(node.right, is_max, maxima)
        )

    shifts = derived(is_shift)

    def is_shifted_exp(node: ast.AST, names: set[str]) -> bool:
        return (
            isinstance(node, ast.Call)
            and _called(node) == "exp"
            and bool(node.args)
            and _holds(node.args[0], is_shift, shifts)
        )

    exps = derived(is_shifted_exp)

    def is_sum(node: ast.AST, names: set[str]) -> bool:
        return _axis_call(node, {"sum", "nansum"}, walk=False)

    sums = derived(is_sum)
    for node in ast.walk(function):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            pair = (node.left, node.right)
        elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Div):
            pair = (node.target, node.value)
        elif isinstance(node, ast.Call) and _called(node) in {"divide", "true_divide", "div"}:
            method = isinstance(node.func, ast.Attribute) and not _module_call(node.func)
            if method and node.args:
                pair = (node.func.value, node.args[0])
            elif len(node.args) >= 2:
                pair = (node.args[0], node.args[1])
            else:
                continue
        else:
            continue
        if _holds(pair[0], is_shifted_exp, exps) and _holds(pair[1], is_sum, sums):
            return True
    return False


def _holds(expr: ast.AST, direct, names: set[str]) -> bool:
    """Whether `expr` holds a node for which `direct(node, names)` holds, or a name in names."""
    return any(
        direct(node, names) or (isinstance(node, ast.Name) and node.id in names)
        for node in ast.walk(expr)
    )


def _axis_call(tree: ast.AST, names: set[str], walk: bool = True) -> bool:
    """Whether `tree` holds (is, with walk=False) a call of one of `names` given an axis (a
    keyword axis/dim/keepdims or a second positional argument, or, as a method, any argument)."""
    for node in ast.walk(tree) if walk else [tree]:
        if not isinstance(node, ast.Call) or _called(node) not in names:
            continue
        keywords = {k.arg for k in node.keywords}
        method = isinstance(node.func, ast.Attribute) and not _module_call(node.func)
        if keywords & {"axis", "dim", "keepdims", "keepdim"} or len(node.args) > 1:
            return True
        if method and node.args:
            return True
    return False


def _called(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _module_call(func: ast.Attribute) -> bool:
    """np.max(...), numpy.max(...), torch.max(...): a module's function, not a method."""
    return isinstance(func.value, ast.Name) and func.value.id in {"np", "numpy", "torch", "math"}


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
