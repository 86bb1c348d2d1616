"""One learner module read with `ast`: what it reaches, and which of its functions refer to which.

A ModuleScan walks a module once. Each finding is attributed to the innermost function or class
it sits in (``t101.attention.scaled_dot_product_attention``; the module's own name for code run
at import), and every reference to a name of the learner's package is an edge of the call graph
(graph.py). What is a finding, and of which kind, is documented in docs/author/graders.md
("The static check of forbidden APIs") and the Finding kinds below.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from autograder.runtime.shared.forbidden_names import ForbiddenNames
from autograder.static_check.exports import PackageExports
from autograder.static_check.resolve import Resolver, fold
from autograder.static_check.watched_names import (
    ATTRIBUTE_CALLS,
    CODE_RUNNERS,
    IMPORTERS,
    INTROSPECTION,
    LOADERS,
    MODULE_TABLE_WRITES,
    NAME_GETTERS,
    PROCESS_CALLS,
    PROCESS_ROOTS,
    RECORDER_OFF,
    SCRIPT_COMPILERS,
)

#: Finding kinds. FORBIDDEN and TAMPER zero the components whose code they serve; REVIEW
#: costs nothing and is shown to the instructor (and the learner) with its file and line.
FORBIDDEN, TAMPER, REVIEW = "forbidden", "tamper", "review"

_OBFUSCATORS = frozenset(
    {"builtins.chr", "builtins.bytes", "builtins.bytearray", "builtins.reversed"}
)
_OBFUSCATING_METHODS = frozenset(
    {"decode", "encode", "translate", "swapcase", "fromhex", "b64decode", "b32decode", "b16decode",
     "a85decode", "b85decode", "unhexlify", "decompress", "loads"}
)  # fmt: skip
_NAME_PATH = re.compile(r"[A-Za-z_]\w*(?:(?:\.|::)[A-Za-z_]\w*)*")


@dataclass(frozen=True)
class Finding:
    """One reach found in a learner module.

    Attributes:
        kind: FORBIDDEN (a forbidden API under some spelling), TAMPER (the grader's code, the
            recorder's wrappers or the module table reached) or REVIEW (a dynamic reach the
            check cannot follow, or a reach into the worker process).
        what: the spelling found, e.g. ``torch.ops.aten._native_multi_head_attention.default``.
        api: for FORBIDDEN, the course.toml API it stands for ("" otherwise).
        file: the module's file relative to the package folder (``attention.py``).
        line: its line (1-based).
        node: the function, method or class it sits in (dotted), or the module's name.
        script_only: it sits under ``if __name__ == "__main__":`` of a module that never
            rebinds ``__name__``, so importing the module does not run it.
    """

    kind: str
    what: str
    api: str
    file: str
    line: int
    node: str
    script_only: bool = False


@dataclass
class Context:
    """What every module's scan shares: the matcher, the package and its own names."""

    names: ForbiddenNames
    package: str
    #: identifiers the learner's package defines (functions, classes, attributes, variables)
    defined: frozenset[str]
    #: those an object of the package can carry: methods, class attributes, attributes set
    attributes: frozenset[str]
    #: top-level names of the grader's own code (autograder, the course's tests, references)
    grader_roots: frozenset[str]
    #: what a name imported from another module of the package stands for outside it
    exports: PackageExports | None = None


@dataclass
class ModuleScan(ast.NodeVisitor):
    """Findings, definitions and references to the package of one module."""

    context: Context
    resolver: Resolver
    file: str
    findings: list[Finding] = field(default_factory=list)
    #: definition (dotted) -> the definitions nested in it (a class's methods, inner functions)
    defines: dict[str, list[str]] = field(default_factory=dict)
    #: definition (dotted) -> origins in the package it refers to
    refers: dict[str, set[str]] = field(default_factory=dict)
    _stack: list[str] = field(default_factory=list)
    _in_main: bool = False
    #: string literals already judged as the name a call gets (hasattr's: a yes or no
    #: reaches no object), not judged again on their own
    _judged: set[int] = field(default_factory=set)

    def scan(self, tree: ast.Module) -> ModuleScan:
        self._enter(self.resolver.module, None)
        self._body(tree.body)
        return self

    # -- structure --------------------------------------------------------------------------

    def _enter(self, name: str, parent: str | None) -> None:
        self.defines.setdefault(name, [])
        self.refers.setdefault(name, set())
        if parent is not None:
            self.defines[parent].append(name)
        self._stack.append(name)

    def _body(self, body: list[ast.stmt]) -> None:
        start = 1 if body and _is_docstring(body[0]) else 0
        for statement in body[start:]:
            self.visit(statement)

    def _definition(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
        for decorator in node.decorator_list:
            self.visit(decorator)  # run where the definition is, not in it
        if isinstance(node, ast.ClassDef):
            for base in [*node.bases, *node.keywords]:
                self.visit(base)
        else:
            self._arguments(node.args)
        name = f"{self._stack[-1]}.{node.name}"
        self._enter(name, self._stack[-1])
        if isinstance(node, ast.ClassDef):  # its methods run on instances of its bases too
            for base in node.bases:
                self.refers[name] |= self._in_package(self.resolver.origins(base))
        self._body(node.body)
        self._stack.pop()

    def _arguments(self, args: ast.arguments) -> None:
        for default in [*args.defaults, *args.kw_defaults]:
            if default is not None:
                self.visit(default)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _definition

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._arguments(node.args)
        self.visit(node.body)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:  # the annotation is never a reach
        self.visit(node.target)
        if node.value is not None:
            self.visit(node.value)

    def visit_arg(self, node: ast.arg) -> None:
        return  # annotations of parameters: types, never calls

    def visit_If(self, node: ast.If) -> None:
        if _is_main_test(node.test) and not self.resolver.rebinds_name:
            saved, self._in_main = self._in_main, True
            self._body(node.body)
            self._in_main = saved
            self._body(node.orelse)
            return
        self.generic_visit(node)

    # -- findings -----------------------------------------------------------------------------

    def _find(self, kind: str, what: str, line: int, api: str = "") -> None:
        finding = Finding(kind, what, api, self.file, line, self._stack[-1], self._in_main)
        if finding not in self.findings:
            self.findings.append(finding)

    def _in_package(self, origins: set[str]) -> set[str]:
        package = self.context.package
        return {o for o in origins if o == package or o.startswith(f"{package}.")}

    def check_origin(self, origin: str, line: int) -> None:
        """A finding for a dotted name that reaches a forbidden API or the grader's code."""
        parts = origin.split(".")
        root = parts[0]
        if root == self.context.package and self.context.exports is not None:
            for outside in self.context.exports.outside(origin):
                self.check_origin(outside, line)
        if root in self.context.grader_roots or "_autograder" in origin:
            self._find(TAMPER, origin, line)
            return
        if root == "torch" and RECORDER_OFF & set(parts):
            self._find(TAMPER, origin, line)
            return
        api = self.context.names.in_path(origin)
        if api is not None:
            self._find(FORBIDDEN, origin, line, api)
        if root in PROCESS_ROOTS or origin in PROCESS_CALLS:
            self._find(REVIEW, origin, line)

    def _reach(self, node: ast.expr) -> set[str]:
        """Check every origin of ``node`` and note the package names it refers to."""
        origins = self.resolver.origins(node)
        for origin in origins:
            self.check_origin(origin, node.lineno)
        self.refers[self._stack[-1]] |= self._in_package(origins)
        return origins

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> None:
        for _name, origin in self.resolver.imported(node):
            self.check_origin(origin, node.lineno)  # a star refers to the module: see stars
            self.refers[self._stack[-1]] |= self._in_package({origin.removesuffix(".*")})
        if isinstance(node, ast.Import):
            for alias in node.names:  # import torch.nn.functional imports all three
                self.check_origin(alias.name, node.lineno)
                self.refers[self._stack[-1]] |= self._in_package({alias.name})

    visit_ImportFrom = visit_Import

    def visit_Name(self, node: ast.Name) -> None:
        if node.id == "__builtins__":
            self._find(REVIEW, "__builtins__", node.lineno)
        if isinstance(node.ctx, ast.Load):
            self._reach(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr == "__wrapped__" or node.attr.startswith("_autograder"):
            self._find(TAMPER, node.attr, node.lineno)
        elif node.attr in INTROSPECTION:
            self._find(REVIEW, node.attr, node.lineno)
        origins = self._reach(node)
        if not origins:
            self._unknown_owner(node.attr, ast.unparse(node), node.lineno, self.context.attributes)
        self.visit(node.value)

    def _unknown_owner(self, name: str, shown: str, line: int, own: frozenset[str]) -> None:
        """``name`` read from an object the check cannot name (or held in a string): a
        forbidden leaf or kernel by its exact name counts, unless the learner's package gives
        an object that name itself (``own``)."""
        api = self.context.names.exact(name)
        if api is not None and name not in own:
            self._find(FORBIDDEN, shown, line, api)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        table = self.resolver.origins(node.value)
        key = fold(node.slice)
        if "sys.modules" in table and not isinstance(node.ctx, ast.Load):
            self._find(TAMPER, "sys.modules", node.lineno)
        elif key is None and _is_name_table(table):
            self._find(REVIEW, f"{ast.unparse(node.value)}[...]", node.lineno)
        self._reach(node)
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        if not isinstance(value, str) or not _NAME_PATH.fullmatch(value.strip()):
            return
        text = value.strip()
        if text == "__wrapped__" or "_autograder" in text:
            self._find(TAMPER, text, node.lineno)
            return
        if _introspects(text) and id(node) not in self._judged:
            self._find(REVIEW, repr(value), node.lineno)  # getattr(f, "__globals__")
        dotted = text.replace("::", ".")
        if "." in dotted:  # "torch.nn.functional.scaled_dot_product_attention", "aten::..."
            self.check_origin(dotted, node.lineno)
        for part in dotted.split("."):
            self._unknown_owner(part, repr(value), node.lineno, self.context.defined)

    def visit_Call(self, node: ast.Call) -> None:
        callee = self.resolver.origins(node.func)
        if "builtins.hasattr" in callee and len(node.args) > 1:
            self._judged.add(id(node.args[1]))
        for origin in callee:
            self._special_call(origin, node)
        self._reach(node)  # what the call gives: attrgetter(...)(torch), import_module(...)
        self.generic_visit(node)

    def _special_call(self, origin: str, node: ast.Call) -> None:
        args, line = node.args, node.lineno
        if origin in MODULE_TABLE_WRITES:
            self._find(TAMPER, origin, line)
        elif origin in LOADERS:
            self._find(REVIEW, origin, line)
        elif origin in IMPORTERS and (not args or fold(args[0]) is None):
            self._find(REVIEW, f"{origin.split('.')[-1]}(...)", line)
        elif origin in CODE_RUNNERS or origin in SCRIPT_COMPILERS:
            self._code_runner(origin, node)
        elif origin in ATTRIBUTE_CALLS and len(args) >= 2:
            self._attribute_call(origin, args[0], args[1], line)
        elif origin in NAME_GETTERS:
            built = [fold(a) for a in args]
            if any(b is not None and _introspects(b) for b in built):
                self._find(REVIEW, f"{origin}({', '.join(map(repr, built))})", line)
                self._judged.update(map(id, args))

    def _attribute_call(self, origin: str, owner: ast.expr, name: ast.expr, line: int) -> None:
        literal, owners = fold(name), self.resolver.origins(owner)
        call = origin.split(".")[-1]
        if call == "hasattr" and literal is not None:
            return  # asks whether it exists; reaches nothing (nanoGPT's flash test)
        foreign = owners - self._in_package(owners)
        if literal is None:
            if foreign or _obfuscated(name, self.resolver):
                self._find(REVIEW, f"{call}({ast.unparse(owner)}, {ast.unparse(name)})", line)
            return
        if literal == "__wrapped__" or "_autograder" in literal:
            self._find(TAMPER, literal, line)
        elif _introspects(literal):
            self._find(REVIEW, f"{call}({ast.unparse(owner)}, {literal!r})", line)
            self._judged.add(id(name))
        for o in owners:
            self.check_origin(f"{o}.{literal}", line)
        if not owners:
            self._unknown_owner(literal, f"{call}(..., {literal!r})", line, self.context.attributes)
        elif call in ("setattr", "delattr") and foreign:
            self._find(REVIEW, f"{call}({ast.unparse(owner)}, {literal!r})", line)

    def _code_runner(self, origin: str, node: ast.Call) -> None:
        """eval/exec/compile and TorchScript's compilers: literal source is checked as if
        written here; anything else is code the check cannot read."""
        given = (
            node.args[0]
            if node.args
            else next((k.value for k in node.keywords if k.arg in ("source", "lang")), None)
        )
        source = fold(given) if given is not None else None
        if source is None:
            self._find(REVIEW, f"{origin.split('.')[-1]}(...)", node.lineno)
            return
        try:
            tree = ast.parse(source)
        except SyntaxError:
            self._find(REVIEW, f"{origin.split('.')[-1]}(...)", node.lineno)
            return
        for inner in ast.walk(tree):
            if hasattr(inner, "lineno"):
                inner.lineno = node.lineno  # type: ignore[attr-defined]
        self._body(tree.body)


def _introspects(name: str) -> bool:
    """A dotted name with a part of INTROSPECTION (``__globals__``, ``f_back.f_globals``)."""
    return any(part.strip() in INTROSPECTION for part in name.split("."))


def _is_docstring(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.Expr)
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    )


def _is_main_test(test: ast.expr) -> bool:
    """``__name__ == "__main__"`` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    if not isinstance(test.ops[0], ast.Eq):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    return len(names) == 1 and any(fold(s) == "__main__" for s in sides)


def _is_name_table(origins: set[str]) -> bool:
    return any(
        o == "sys.modules"
        or o.endswith(".__dict__")
        or o in ("builtins.globals()", "builtins.__builtins__")
        for o in origins
    )


def _obfuscated(node: ast.expr, resolver: Resolver) -> bool:
    """A name built character by character or decoded (chr, bytes, base64, reversed, [::-1])."""
    for inner in ast.walk(node):
        if isinstance(inner, ast.Slice) and inner.step is not None:
            return True
        if isinstance(inner, ast.Name) and resolver.origins(inner) & _OBFUSCATORS:
            return True  # map(chr, ...)
        if isinstance(inner, ast.Call):
            callee = resolver.origins(inner.func)
            if callee & _OBFUSCATORS or any(
                o.split(".")[0] in ("base64", "codecs", "binascii", "zlib") for o in callee
            ):
                return True
            if isinstance(inner.func, ast.Attribute) and inner.func.attr in _OBFUSCATING_METHODS:
                return True
    return False
