"""What a name imported from another module of the learner's package stands for outside it.

Each module is resolved on its own (resolve.Resolver), so ``from .softmax import _sdpa``
resolves to ``t101.softmax._sdpa``, a name of the package. PackageExports follows it into the
module that binds it (imports, assignments, star imports), through re-exports, to the origins
outside the package it may stand for (``torch.nn.functional.scaled_dot_product_attention``),
which the importing module's scan checks where the name is used.

A component's graded name (what the graders call) is never followed: calling another
component's graded function is legitimate, and what it does is charged to that component.

Design: docs/internals/runtime.md#the-static-check.
"""

from __future__ import annotations

from autograder.static_check.resolve import Resolver

#: Names of the package followed for one origin at most (re-exports of re-exports).
FOLLOWED = 64


class PackageExports:
    """The package's module-level names, resolved across its modules.

    Args:
        package: the learner's package name (``t101``).
        resolvers: every parsed module's resolver, by dotted module name.
        graded: every component's graded names (dotted), never followed.
    """

    def __init__(
        self, package: str, resolvers: dict[str, Resolver], graded: frozenset[str] = frozenset()
    ) -> None:
        self.package = package
        self.resolvers = resolvers
        self.graded = graded

    def _inside(self, origin: str) -> bool:
        return origin == self.package or origin.startswith(f"{self.package}.")

    def _split(self, origin: str) -> tuple[Resolver, str, str] | None:
        """(resolver of the longest module prefix, the name after it, the rest with its dot)."""
        parts = origin.split(".")
        for end in range(len(parts) - 1, 0, -1):
            resolver = self.resolvers.get(".".join(parts[:end]))
            if resolver is not None:
                rest = "".join(f".{p}" for p in parts[end + 1 :])
                return resolver, parts[end], rest
        return None

    def outside(self, origin: str) -> set[str]:
        """The origins outside the package that a dotted name of the package may stand for
        (``t101.softmax._sdpa`` -> ``{"torch.nn.functional.scaled_dot_product_attention"}``);
        empty for the package's own functions, classes and modules."""
        found: set[str] = set()
        seen: set[str] = set()
        pending = [origin] if self._inside(origin) else []
        while pending and len(seen) < FOLLOWED:
            current = pending.pop()
            if current in seen:
                continue
            seen.add(current)
            split = self._split(current)
            if split is None:
                continue
            resolver, name, rest = split
            if f"{resolver.module}.{name}" in self.graded:
                continue
            for bound in resolver.exported(name):
                (pending.append if self._inside(bound) else found.add)(f"{bound}{rest}")
        return found
