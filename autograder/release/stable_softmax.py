"""Finding a complete, numerically stable softmax in a release's Python source, however written.

A softmax is the first component of a course like this one: a release holding one, written anew
or copied, hands learners an answer (release/leaks.py refuses it). Read with `ast`, never run.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

Direct = Callable[[ast.AST], bool]
_MODULES = {"np", "numpy", "torch", "math"}
_AXIS_KEYWORDS = {"axis", "dim", "keepdims", "keepdim"}


def stable_softmaxes(source: str) -> list[str]:
    """The functions of `source` that compute a numerically stable softmax: `exp(a - m)`, `m`
    a maximum taken along an axis (a call of max/amax/nanmax with an axis or keepdims, or the
    `.max(...)` method with one), divided (`/`, `/=`, `divide`, `div`) by something holding a
    `sum` (function or method) taken along an axis. A name assigned in the function stands for
    what its values were computed from (`m = x.max(-1, keepdims=True)`, `m = np.where(m == -inf,
    0, m)`, `e = np.exp(x - m)`, `total = e.sum(-1)`, `np.divide(e, total, ...)`). A source that
    does not parse holds none."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    return [
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and _Function(node).divides_shifted_exp_by_sum()
    ]


class _Function:
    """One function's names, by what their values hold: a maximum along an axis, a shift by
    one, the exp of a shift, a sum along an axis."""

    def __init__(self, function: ast.AST) -> None:
        self.function = function
        self.assigned = list(_assignments(function))
        self.maxima = self.derived(_is_max)
        self.shifts = self.derived(self.is_shift)
        self.exps = self.derived(self.is_shifted_exp)
        self.sums = self.derived(_is_sum)

    def derived(self, direct: Direct) -> set[str]:
        """The names whose value holds a node for which `direct` holds, or such a name."""
        names: set[str] = set()
        while True:
            more = {
                n
                for targets, value in self.assigned
                if _holds(value, direct, names)
                for n in targets
            }
            if more <= names:
                return names
            names |= more

    def is_shift(self, node: ast.AST) -> bool:
        return (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Sub)
            and _holds(node.right, _is_max, self.maxima)
        )

    def is_shifted_exp(self, node: ast.AST) -> bool:
        return (
            isinstance(node, ast.Call)
            and _called(node) == "exp"
            and bool(node.args)
            and _holds(node.args[0], self.is_shift, self.shifts)
        )

    def divides_shifted_exp_by_sum(self) -> bool:
        return any(
            _holds(top, self.is_shifted_exp, self.exps) and _holds(bottom, _is_sum, self.sums)
            for top, bottom in _divisions(self.function)
        )


def _assignments(function: ast.AST) -> Iterator[tuple[list[str], ast.AST]]:
    """(names assigned, the expression they come from), for each assignment in function."""
    for node in ast.walk(function):
        if isinstance(node, ast.Assign):
            yield (
                [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)],
                node.value,
            )
        elif isinstance(node, ast.AugAssign | ast.AnnAssign) and node.value is not None:
            if isinstance(node.target, ast.Name):
                yield [node.target.id], node.value


def _divisions(function: ast.AST) -> Iterator[tuple[ast.AST, ast.AST]]:
    """(numerator, denominator) of each division in function: `/`, `/=`, divide, div."""
    for node in ast.walk(function):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            yield node.left, node.right
        elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Div):
            yield node.target, node.value
        elif isinstance(node, ast.Call) and _called(node) in {"divide", "true_divide", "div"}:
            if _is_method(node) and node.args:
                yield node.func.value, node.args[0]
            elif len(node.args) >= 2:
                yield node.args[0], node.args[1]


def _holds(expr: ast.AST, direct: Direct, names: set[str]) -> bool:
    """Whether `expr` holds a node for which `direct` holds, or a name in names."""
    return any(
        direct(node) or (isinstance(node, ast.Name) and node.id in names) for node in ast.walk(expr)
    )


def _is_max(node: ast.AST) -> bool:
    return _axis_call(node, {"max", "amax", "nanmax"})


def _is_sum(node: ast.AST) -> bool:
    return _axis_call(node, {"sum", "nansum"})


def _axis_call(node: ast.AST, names: set[str]) -> bool:
    """Whether node is a call of one of `names` given an axis (a keyword axis/dim/keepdims or a
    second positional argument, or, as a method, any argument)."""
    if not isinstance(node, ast.Call) or _called(node) not in names:
        return False
    if {k.arg for k in node.keywords} & _AXIS_KEYWORDS or len(node.args) > 1:
        return True
    return _is_method(node) and bool(node.args)


def _called(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _is_method(call: ast.Call) -> bool:
    """x.max(...), not np.max(...), numpy.max(...), torch.max(...) (a module's function)."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    return not (isinstance(func.value, ast.Name) and func.value.id in _MODULES)
