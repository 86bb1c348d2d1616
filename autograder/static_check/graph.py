"""Which components' code paths reach a definition: the package's static call graph.

Nodes are the package's modules and its functions, classes and methods, by dotted name; a node
reaches what it refers to (scan.ModuleScan.refers), what it defines, and the module a name lives
in. A component's path starts at its own module file's definitions and the package's
``__init__`` modules, and never enters another component's graded names; it enters another
component's module code only through a name of that module which is not graded (a helper, a
module variable, an alias). A finding is charged to every component whose path reaches its node.

Invariant: the graph over-approximates (every reference is a call): a component may be charged
for code it could call but did not, never spared for code it did call in its source.

Design: docs/internals/runtime.md#the-call-graph.
"""

from __future__ import annotations

from collections.abc import Iterable


class CallGraph:
    """Reachability over the definitions of the learner's package."""

    def __init__(self, package: str) -> None:
        self.package = package
        self.edges: dict[str, set[str]] = {}

    def add(self, defines: dict[str, list[str]], refers: dict[str, set[str]]) -> None:
        """Add one module's scan (scan.ModuleScan.defines and .refers)."""
        for node, children in defines.items():
            self.edges.setdefault(node, set()).update(children)
        for node, origins in refers.items():
            self.edges.setdefault(node, set()).update(origins)

    def _target(self, origin: str) -> str | None:
        """The node an origin names: itself, or its longest prefix that is a node
        (``t101.helpers.f.__call__`` -> ``t101.helpers.f``)."""
        parts = origin.split(".")
        for end in range(len(parts), 0, -1):
            name = ".".join(parts[:end])
            if name in self.edges:
                return name
        return None

    def _modules_of(self, node: str) -> list[str]:
        """The modules and packages that a node lives in, outermost first: running a name of a
        module imports it and its packages (their module-level code)."""
        parts = node.split(".")
        return [".".join(parts[:end]) for end in range(1, len(parts) + 1)]

    def reach(
        self,
        starts: Iterable[str],
        stop_names: frozenset[str] = frozenset(),
        stop_modules: frozenset[str] = frozenset(),
    ) -> set[str]:
        """Every node reachable from ``starts``, never entering a name of ``stop_names`` (nor
        anything inside it): another component's graded names are that component's, charged
        to it alone. A module of ``stop_modules`` (another component's file) is entered only
        through a name of it that is not graded (a helper, a variable, an alias): the code its
        file runs at import made that name, so who uses the name is charged for that code too;
        importing the module itself, or calling its graded names, is not."""
        seen: set[str] = set()
        pending = [s for s in starts if s in self.edges]
        while pending:
            node = pending.pop()
            if node in seen:
                continue
            seen.add(node)
            for origin in self.edges.get(node, ()):
                target = self._target(origin)
                if target is None or any(m in stop_names for m in self._modules_of(origin)):
                    continue
                pending += [
                    m
                    for m in self._modules_of(target)
                    if m in self.edges and m not in seen and (m not in stop_modules or m != origin)
                ]
        return seen

    def component_starts(self, module: str) -> list[str]:
        """Where a component's code path starts: its module, everything defined in it (the
        names graders call are among them) and the packages above it."""
        inside = [n for n in self.edges if n == module or n.startswith(f"{module}.")]
        return [*self._modules_of(module), *inside]
