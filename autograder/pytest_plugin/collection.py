"""Collection: which tests are grader tests, their component, weight, name and seed, their order.

A grader test is a test under the course's visible or hidden tests folder; it carries exactly
one component marker (else collection stops with a sentence naming it) and at most one
`weight(n)`. They run visible before hidden, component by component in course.toml's order.

PYTEST_DONT_REWRITE
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from autograder.config import CourseConfig
from autograder.pytest_plugin.state import INFO, STATE, GraderInfo

NO_MARKER = (
    "{nodeid} carries no component marker; mark it with exactly one of: {markers} "
    "(e.g. @pytest.mark.{example})."
)
MANY_MARKERS = (
    "{nodeid} carries {count} component markers ({found}); a grader test belongs to exactly one "
    "component."
)
BAD_WEIGHT = (
    "{nodeid} has @pytest.mark.weight{args}; expected one positive number, "
    "e.g. @pytest.mark.weight(2)."
)


def seed_for(base: int, key: str) -> int:
    """A seed in [0, 2**32) from the run's seed and a stable key (course-relative nodeid)."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return (base + int.from_bytes(digest[:8], "big")) % 2**32


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    state = config.stash.get(STATE, None)
    if state is None:
        return
    names = [c.name for c in state.course.components]
    problems = []
    for item in items:
        visibility = _visibility(state.course, Path(item.path))
        if visibility is None:
            continue
        found = [n for n in names if item.get_closest_marker(n) is not None]
        if len(found) != 1:
            template = NO_MARKER if not found else MANY_MARKERS
            problems.append(
                template.format(
                    nodeid=item.nodeid,
                    markers=", ".join(names),
                    example=names[0],
                    count=len(found),
                    found=", ".join(found),
                )
            )
            continue
        weight = _weight(item)
        if weight is None:
            mark = item.get_closest_marker("weight")
            args = "(" + ", ".join(map(repr, mark.args if mark else ())) + ")"
            problems.append(BAD_WEIGHT.format(nodeid=item.nodeid, args=args))
            continue
        key = f"{Path(item.path).resolve().relative_to(state.course.root).as_posix()}::{item.name}"
        item.stash[INFO] = GraderInfo(
            component=found[0],
            weight=weight,
            visibility=visibility,
            name=_display_name(item),
            seed=seed_for(state.seed, key),
        )
        # pytest computes an item's location (its file relative to the rootdir, its line: the
        # source of its function is read) the first time it reports it, and caches it on the
        # item. Computed here, at collection, a batch's session process does it once for the
        # whole class, and each learner's forked child inherits it.
        item.location  # noqa: B018
    if problems:
        state.usage_errors.extend(problems)
        raise pytest.UsageError(*problems)
    _in_course_order(items, names)


def _in_course_order(items: list[pytest.Item], names: list[str]) -> None:
    """Every visible grader test runs before every hidden one; within each, component by
    component in course.toml's order (softmax before attention...), as the course builds them,
    not in the files' alphabetical order; within a component, and for other tests, pytest's
    order is kept. Hidden tests last: learner code that keeps a hidden input in memory (in
    builtins, say) cannot show it in a later visible test's message or printed output, which
    the learner sees in full."""
    rank = {name: index for index, name in enumerate(names)}

    def key(item: pytest.Item) -> tuple[bool, int]:
        info = item.stash.get(INFO, None)
        if info is None:
            return (False, len(rank))
        return (info.visibility == "hidden", rank[info.component])

    items.sort(key=key)


def _visibility(course: CourseConfig, path: Path) -> str | None:
    path = path.resolve()
    for visibility, folder in (("visible", course.visible_tests), ("hidden", course.hidden_tests)):
        if folder is not None and path.is_relative_to(folder):
            return visibility
    return None


def _weight(item: pytest.Item) -> float | None:
    mark = item.get_closest_marker("weight")
    if mark is None:
        return 1.0
    if len(mark.args) != 1 or mark.kwargs or isinstance(mark.args[0], bool):
        return None
    value = mark.args[0]
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def _display_name(item: pytest.Item) -> str:
    """The test's docstring first line (its name when it has none), with its parameters."""
    doc = (getattr(getattr(item, "function", None), "__doc__", None) or "").strip()
    name = doc.split("\n", 1)[0].strip() or getattr(item, "originalname", item.name)
    callspec = getattr(item, "callspec", None)
    return f"{name} [{callspec.id}]" if callspec is not None else name
