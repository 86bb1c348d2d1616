"""What a name or an expression of a learner module may stand for, without running it.

An expression resolves to a set of dotted *origins*: ``F`` after ``import torch.nn.functional
as F`` is ``{"torch.nn.functional"}``; ``getattr(F, "soft" + "max")`` is
``{"torch.nn.functional.softmax"}``; ``sys.modules["torch"].ops`` is ``{"torch.ops"}``; a name
of the learner's package resolves inside it (``from .attention import f`` -> ``t101.attention.f``).
A name unbound in the module is a builtin (``builtins.getattr``), else that name of each module
it star-imports (``from torch.nn.functional import *``). Anything that cannot be known
(a call's result, a parameter) resolves to nothing.

Bindings are flow- and scope-insensitive: a name bound anywhere in the module (an import, an
assignment, a parameter's default, a loop over literals) may hold any of its values everywhere.
That over-approximates what a name may hold, which is what a check that must not be fooled
wants; a learner pays for it only by reusing one name for torch and for their own object.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable

from autograder.static_check.step_budget import StepBudget

BUILTIN_NAMES = frozenset(dir(builtins)) | {"__builtins__"}
#: Calls whose result is another name of their argument (name -> how it is read).
_GETATTR = {"builtins.getattr"}
_IMPORTERS = {"importlib.import_module", "builtins.__import__", "importlib.__import__"}
_MODULE_TABLES = {"sys.modules"}


def _is_table(origin: str) -> bool:
    return origin.endswith(".__dict__") or origin in ("builtins.__builtins__", "builtins.globals()")


def fold(node: ast.AST | None) -> str | None:
    """The string a constant expression makes (literals, +, f-strings of literals, "".join of
    literals, % of literals), or None when it is built from anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = fold(node.left), fold(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.JoinedStr):
        parts = [
            fold(v) if not isinstance(v, ast.FormattedValue) else fold(v.value) for v in node.values
        ]
        return None if None in parts else "".join(parts)  # type: ignore[arg-type]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "join"
        and len(node.args) == 1
        and isinstance(node.args[0], ast.List | ast.Tuple)
    ):
        glue, parts = fold(node.func.value), [fold(e) for e in node.args[0].elts]
        return None if glue is None or None in parts else glue.join(parts)  # type: ignore[arg-type]
    return None


class Resolver:
    """Origins of names and expressions in one module of the learner's package.

    Args:
        module: the module's dotted name (``t101.attention``; ``t101`` for ``__init__.py``).
        is_package: the module is a package's ``__init__.py``.
        tree: its parsed source.
        budget: the submission's step budget, shared by its modules (one step per
            ``origins``; budget.BudgetSpent when it runs out).
    """

    def __init__(
        self, module: str, is_package: bool, tree: ast.Module, budget: StepBudget | None = None
    ) -> None:
        self.module = module
        self.package = module if is_package else module.rpartition(".")[0]
        self.bindings: dict[str, set[str]] = {}
        #: attribute name -> what was assigned to it on any object (self.F = torch.nn.functional)
        self.attributes: dict[str, set[str]] = {}
        #: function (dotted) -> the expressions it returns (a call of it may be any of them)
        self.returns: dict[str, list[ast.expr]] = {}
        self.rebinds_name = False  # the module assigns __name__ (its "__main__" block may run)
        #: modules it star-imports (``from torch.nn.functional import *``): an unbound bare
        #: name may be any of theirs
        self.stars: set[str] = set()
        self.budget = budget if budget is not None else StepBudget()
        #: functions on the stack of _returned, in order (a call of one of them is skipped)
        self._calling: list[str] = []
        #: function -> what a call of it returns, once known whatever the stack
        self._known: dict[str, set[str]] = {}
        #: the lowest stack position a skipped call pointed at, while computing a return
        self._skipped_at = 0
        self._define(tree.body, module, in_class=False)
        self._bind_all(tree)

    def _define(self, body: list[ast.stmt], prefix: str, *, in_class: bool) -> None:
        """Bind each function and class name to its dotted name (a method is no bare name),
        and note what each function returns."""
        for node in _defs_in(body):
            name = f"{prefix}.{node.name}"
            if not in_class:
                self.bindings.setdefault(node.name, set()).add(name)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.returns[name] = [
                    r.value for r in _own_nodes(node) if isinstance(r, ast.Return) and r.value
                ]
            self._define(node.body, name, in_class=isinstance(node, ast.ClassDef))

    # -- bindings -------------------------------------------------------------------------

    def _bind_all(self, tree: ast.Module) -> None:
        imports, others = [], []
        for node in ast.walk(tree):
            (imports if isinstance(node, ast.Import | ast.ImportFrom) else others).append(node)
        for node in imports:
            for name, origin in self.imported(node):
                if name == "*":
                    self.stars.add(origin.removesuffix(".*"))
                else:
                    self.bindings.setdefault(name, set()).add(origin)
        for _ in range(4):  # aliases of aliases: F = torch.nn.functional; G = F
            before = sum(map(len, self.bindings.values()))
            for node in others:
                self._bind(node)
            self._known.clear()  # what functions return may change with the new bindings
            if sum(map(len, self.bindings.values())) == before:
                break

    def imported(self, node: ast.Import | ast.ImportFrom) -> list[tuple[str, str]]:
        """(name bound, origin) for each alias of an import statement."""
        if isinstance(node, ast.Import):
            out = []
            for alias in node.names:
                if alias.asname:
                    out.append((alias.asname, alias.name))
                else:
                    out.append((alias.name.split(".")[0], alias.name.split(".")[0]))
            return out
        base = self.absolute(node.module or "", node.level)
        return [(a.asname or a.name, f"{base}.{a.name}" if base else a.name) for a in node.names]

    def exported(self, name: str) -> set[str]:
        """What the module's name ``name`` may stand for to a module importing it: its bindings,
        else the same name of each module it star-imports."""
        if name in self.bindings:
            return set(self.bindings[name])
        return {f"{star}.{name}" for star in self.stars}

    def absolute(self, module: str, level: int) -> str:
        """The absolute name of a (possibly relative) imported module."""
        if not level:
            return module
        base = self.package.split(".") if self.package else []
        base = base[: len(base) - (level - 1)] if level > 1 else base
        return ".".join([*base, *([module] if module else [])])

    def _bind(self, node: ast.AST) -> None:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                self._bind_target(target, node.value)
        elif isinstance(node, ast.AnnAssign | ast.NamedExpr | ast.AugAssign) and node.value:
            self._bind_target(node.target, node.value)
        elif isinstance(node, ast.For):
            if isinstance(node.iter, ast.List | ast.Tuple | ast.Set):
                for element in node.iter.elts:
                    self._bind_target(node.target, element)
        elif isinstance(node, ast.withitem) and node.optional_vars is not None:
            self._bind_target(node.optional_vars, node.context_expr)
        elif isinstance(node, ast.arguments):
            positional = [*node.posonlyargs, *node.args]
            pairs = zip(
                positional[len(positional) - len(node.defaults) :], node.defaults, strict=False
            )
            kw = [
                (a, d)
                for a, d in zip(node.kwonlyargs, node.kw_defaults, strict=False)
                if d is not None
            ]
            for arg, default in [*pairs, *kw]:
                self._add(arg.arg, self.origins(default))

    def _bind_target(self, target: ast.AST, value: ast.AST) -> None:
        if isinstance(target, ast.Attribute):
            found = self.origins(value)
            if found:
                self.attributes.setdefault(target.attr, set()).update(found)
        elif isinstance(target, ast.Name):
            if target.id == "__name__":
                self.rebinds_name = True
            self._add(target.id, self.origins(value))
        elif isinstance(target, ast.Tuple | ast.List) and isinstance(value, ast.Tuple | ast.List):
            for sub_target, sub_value in zip(target.elts, value.elts, strict=False):
                self._bind_target(sub_target, sub_value)

    def _add(self, name: str, origins: Iterable[str]) -> None:
        found = set(origins)
        if found:
            self.bindings.setdefault(name, set()).update(found)

    # -- resolution -----------------------------------------------------------------------

    def origins(self, node: ast.AST | None) -> set[str]:
        """The dotted names ``node`` may stand for (empty when unknown)."""
        self.budget.spend()
        if isinstance(node, ast.Name):
            if node.id in self.bindings or node.id not in BUILTIN_NAMES:
                return self.exported(node.id)
            return {f"builtins.{node.id}"}
        if isinstance(node, ast.Attribute):
            owners = self.origins(node.value)
            if not owners:  # self.F, where some object's F was given a name
                return set(self.attributes.get(node.attr, ()))
            return {f"{o}.{node.attr}" for o in owners}
        if isinstance(node, ast.Subscript):
            return self._subscript(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.NamedExpr):
            return self.origins(node.value)
        if isinstance(node, ast.IfExp):
            return self.origins(node.body) | self.origins(node.orelse)
        if isinstance(node, ast.BoolOp):
            return set().union(*(self.origins(v) for v in node.values))
        if isinstance(node, ast.List | ast.Tuple | ast.Set):  # an element may be taken out
            return set().union(*(self.origins(e) for e in node.elts))
        if isinstance(node, ast.Dict):
            return set().union(*(self.origins(v) for v in node.values))
        if isinstance(node, ast.Starred):
            return self.origins(node.value)
        return set()

    def _subscript(self, node: ast.Subscript) -> set[str]:
        key = fold(node.slice)
        table = self.origins(node.value)
        if key is None:  # an element of a list or dict of names, whichever
            return {o for o in table if o not in _MODULE_TABLES and not _is_table(o)}
        out = set()
        for origin in table:
            if origin in _MODULE_TABLES:  # sys.modules["torch.nn"]
                out.add(key)
            elif origin.endswith(".__dict__") or origin == "builtins.__builtins__":
                out.add(f"{origin.removesuffix('.__dict__')}.{key}")
            elif origin == "builtins.globals()":
                out |= self.bindings.get(
                    key, {f"builtins.{key}"} if key in BUILTIN_NAMES else set()
                )
            else:  # a list, tuple or dict literal holding names
                out.add(origin)
        return out

    def _call(self, node: ast.Call) -> set[str]:
        if isinstance(node.func, ast.Lambda):  # (lambda: F)()
            return self.origins(node.func.body)
        callee = self.origins(node.func)
        out = self._returned(callee)
        args = node.args
        first = fold(args[0]) if args else None
        second = fold(args[1]) if len(args) > 1 else None
        for origin in callee:
            if origin in _GETATTR and second is not None:
                out |= {f"{o}.{second}" for o in self.origins(args[0])}
            elif origin in _IMPORTERS and first is not None:
                package = second if origin == "importlib.import_module" else None
                name = self.absolute(first.lstrip("."), len(first) - len(first.lstrip(".")))
                if package and first.startswith("."):
                    name = f"{package}{first}"
                out |= {name, name.split(".")[0]}
            elif origin == "builtins.vars" and args:
                out |= {f"{o}.__dict__" for o in self.origins(args[0])}
            elif origin in ("builtins.globals", "builtins.locals"):
                out.add("builtins.globals()")
            elif origin.endswith((".__getattribute__", ".__getattr__")) and first is not None:
                owner = origin.rsplit(".", 1)[0]
                if owner in ("builtins.object", "builtins.type") and second is not None:
                    out |= {f"{o}.{second}" for o in self.origins(args[0])}
                else:
                    out.add(f"{owner}.{first}")
            elif origin == "sys.modules.get" and first is not None:
                out.add(first)
            elif origin == "functools.reduce" and len(args) == 3:
                out |= self._reduce(args)
        if isinstance(node.func, ast.Call):  # operator.attrgetter("a.b")(obj)
            inner = self.origins(node.func.func)
            path = fold(node.func.args[0]) if node.func.args else None
            if "operator.attrgetter" in inner and path is not None and args:
                out |= {f"{o}.{path}" for o in self.origins(args[0])}
        return out

    def _returned(self, callee: set[str]) -> set[str]:
        """What a call of one of this module's functions may return: what it returns. A
        function already being followed is skipped (recursion); a result is remembered once it
        does not depend on such a skip of a caller below it, so each is followed once."""
        out: set[str] = set()
        for origin in sorted(callee & self.returns.keys()):
            if origin in self._known:
                out |= self._known[origin]
            elif origin in self._calling:
                self._skipped_at = min(self._skipped_at, self._calling.index(origin))
            else:
                out |= self._followed(origin)
        return out

    def _followed(self, origin: str) -> set[str]:
        """Follow the returns of one function (on the stack while doing so)."""
        depth, outer = len(self._calling), self._skipped_at
        self._calling.append(origin)
        self._skipped_at = depth + 1
        found: set[str] = set()
        try:
            for value in self.returns[origin]:
                found |= self.origins(value)
        finally:
            self._calling.pop()
        if self._skipped_at >= depth:  # skipped only itself and what it called: final
            self._known[origin] = found
        self._skipped_at = min(outer, self._skipped_at)
        return found

    def _reduce(self, args: list[ast.expr]) -> set[str]:
        """functools.reduce(getattr, ["nn", "functional"], torch) -> torch.nn.functional."""
        if not (self.origins(args[0]) & _GETATTR) or not isinstance(args[1], ast.List | ast.Tuple):
            return set()
        parts = [fold(e) for e in args[1].elts]
        if None in parts:
            return set()
        return {".".join([o, *parts]) for o in self.origins(args[2])}  # type: ignore[list-item]


def _defines(node: ast.AST) -> bool:
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)


def _own_nodes(function: ast.AST) -> list[ast.AST]:
    """The nodes of a function's body, not those of the functions and classes inside it."""
    out, pending = [], list(ast.iter_child_nodes(function))
    while pending:
        node = pending.pop()
        out.append(node)
        if not _defines(node) and not isinstance(node, ast.Lambda):
            pending += ast.iter_child_nodes(node)
    return out


def _defs_in(body: list[ast.stmt]) -> list[ast.AST]:
    """The functions and classes a body defines, in ifs and trys too, not inside each other."""
    out, pending = [], list(body)
    while pending:
        node = pending.pop(0)
        if _defines(node):
            out.append(node)
        elif isinstance(node, ast.stmt):
            pending += [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.stmt)]
    return out
