"""The static check of a learner's package for forbidden APIs, made in the trusted harness.

``check_package`` reads the package's ``.py`` files without following links (learner_files),
parses them with `ast` (never imports them, never matches text) and finds every reach of a
forbidden API of course.toml's ``[forbidden] apis`` under any spelling, every reach into the
grader's own code, and every dynamic reach it cannot follow. A FORBIDDEN or TAMPER finding
zeroes each component whose code path reaches it (graph.py); a REVIEW finding, or one no
component reaches, costs nothing and flags the learner for review with file and line. The
worker's recorders (runtime/worker/guard.py) are the second layer.

Design: docs/internals/runtime.md#the-static-check; for course authors:
docs/author/graders.md#the-static-check-of-forbidden-apis.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from autograder.config import CourseConfig
from autograder.results import ForbiddenUse, ReviewFlag
from autograder.runtime.harness.private_copy import PackageTooLarge, read_package
from autograder.runtime.shared.forbidden_names import ForbiddenNames
from autograder.static_check.exports import PackageExports
from autograder.static_check.graph import CallGraph
from autograder.static_check.resolve import Resolver
from autograder.static_check.scan import FORBIDDEN, REVIEW, TAMPER, Context, Finding, ModuleScan
from autograder.static_check.step_budget import STEPS, BudgetSpent, StepBudget
from autograder.static_check.unread_modules import unread_imports

__all__ = ["StaticCheck", "check_package", "check_sources"]

USED_AT = "{sentence} It is used in {file} at line {line}{spelled}{caller}."
SPELLED = " (as {what})"
CALLED_FROM = ", in code this part calls"
TAMPERS = (
    "Your code reaches into the grader itself ({what}, in {file} at line {line}): code being "
    "graded must not touch the grader, its records or its modules, so this part scores zero."
)
REVIEW_REACH = "{file} line {line}: {what} reaches code the grader cannot read from the source."
REVIEW_UNUSED = (
    "{file} line {line}: {what} is a library implementation, in code no graded part calls."
)
REVIEW_SCRIPT = (
    "{file} line {line}: {what} is a library implementation, in code that runs only as a "
    'script (under if __name__ == "__main__").'
)
REVIEW_TAMPER_UNUSED = (
    "{file} line {line}: {what} reaches into the grader, in code no graded part calls."
)
#: Finding.what for a file nested too deeply to read (flagged for review: read it yourself).
TOO_DEEP = "code nested too deeply to read"
#: Finding.what for the file where the check's step budget ran out (flagged for review).
TOO_COSTLY = "code too costly to follow"
REVIEW_COSTLY = (
    "{file}: the check for forbidden APIs stopped in this file: following how the package's "
    "functions call and return one another took more than {steps} steps, so this file and "
    "those after it were not fully checked; read them yourself."
)
#: The grader's own top-level packages, whatever the course calls its folders.
FRAMEWORK_ROOTS = frozenset({"autograder"})


@dataclass
class StaticCheck:
    """What the static check found in one package.

    Attributes:
        uses: one ForbiddenUse per (finding, component charged), with its sentence.
        review: every finding that flags the learner for review (file, line, sentence).
        findings: every finding, charged or not (for the log and tests).
        unreadable: files that do not parse (the worker reports their syntax errors).
        evidence: the first reach into the grader or the worker process, as "file line N:
            what" ("" when none): a worker that then breaks is told as tampered with.
        steps: resolution steps the check took (step_budget.STEPS at most, then it stops).
    """

    uses: list[ForbiddenUse] = field(default_factory=list)
    review: list[ReviewFlag] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    evidence: str = ""
    steps: int = 0


def check_package(config: CourseConfig, package_dir: Path) -> StaticCheck:
    """Read the package folder (the harness's real path of it) as the worker's copy is read,
    through no link, and check its sources; an empty StaticCheck when it cannot be read (the
    worker says why)."""
    try:
        tree = read_package(package_dir)
    except (OSError, PackageTooLarge):
        return StaticCheck()
    if tree is None:
        return StaticCheck()
    return check_sources(config, {p: d for p, d in tree.files.items() if p.endswith(".py")})


def check_sources(
    config: CourseConfig, files: dict[str, bytes], budget: StepBudget | None = None
) -> StaticCheck:
    """Check the package's sources ({path relative to the package folder: bytes}) within a
    step budget (step_budget.STEPS unless given): where it runs out, the check stops and flags the
    learner for review, naming the file."""
    budget = budget if budget is not None else StepBudget()
    package = config.package
    trees, unreadable = _parsed(files)
    graded = _graded_names(config, trees)
    resolvers, findings = _resolvers(package, trees, budget)
    context = Context(
        names=ForbiddenNames.from_apis(tuple(config.forbidden.apis)),
        package=package,
        defined=_defined_names(trees.values()),
        attributes=_attribute_names(trees.values()),
        grader_roots=_grader_roots(config),
        exports=PackageExports(
            package,
            {r.module: r for r in resolvers.values()},
            frozenset().union(*graded.values()),
        ),
    )
    graph = CallGraph(package)
    for path, resolver in resolvers.items():
        try:
            scan = ModuleScan(context, resolver, path).scan(trees[path])
        except RecursionError:  # expressions nested beyond what a reader can follow
            findings.append(Finding(REVIEW, TOO_DEEP, "", path, 1, resolver.module))
            continue
        except BudgetSpent:  # the rest is left unread, and the learner flagged for review
            findings.append(Finding(REVIEW, TOO_COSTLY, "", path, 1, resolver.module))
            break
        graph.add(scan.defines, scan.refers)
        findings += scan.findings
    findings += unread_imports(package, trees, resolvers)  # code written while it runs
    result = StaticCheck(findings=findings, unreadable=unreadable, steps=budget.used)
    reaching = next(  # a check that ran out of steps is no evidence of a reach
        (f for f in findings if f.kind in (TAMPER, REVIEW) and f.what != TOO_COSTLY), None
    )
    if reaching is not None:
        result.evidence = f"{_shown(config, reaching.file)} line {reaching.line}: {reaching.what}"
    reaches = {}
    for component in config.components:
        others = [c for c in config.components if c.name != component.name]
        reaches[component.name] = graph.reach(
            graph.component_starts(f"{package}.{component.module}"),
            stop_names=frozenset().union(*(graded[c.name] for c in others)),
            stop_modules=frozenset(f"{package}.{c.module}" for c in others),
        )
    for finding in findings:
        charged = [c for c in config.components if finding.node in reaches[c.name]]
        if finding.kind == REVIEW or finding.script_only or not charged:
            result.review.append(_review(config, finding, budget.limit))
            continue
        for component in charged:
            result.uses.append(_use(config, finding, component))
    return result


def _resolvers(
    package: str, trees: dict[str, ast.Module], budget: StepBudget
) -> tuple[dict[str, Resolver], list[Finding]]:
    """Each readable module's resolver, by file; a file too deep or too costly to resolve is
    a finding for review instead (and none after a too costly one is resolved)."""
    resolvers: dict[str, Resolver] = {}
    findings: list[Finding] = []
    for path, tree in trees.items():
        module, is_package = _module_name(package, path)
        try:
            resolvers[path] = Resolver(module, is_package, tree, budget)
        except RecursionError:
            findings.append(Finding(REVIEW, TOO_DEEP, "", path, 1, module))
        except BudgetSpent:
            findings.append(Finding(REVIEW, TOO_COSTLY, "", path, 1, module))
            break
    return resolvers, findings


def _graded_names(config: CourseConfig, trees: dict[str, ast.Module]) -> dict[str, set[str]]:
    """Each component's graded names (dotted): the public functions and classes its stub in
    the course's own package folder defines (what the graders call), else those of the
    learner's module."""
    names = {}
    for component in config.components:
        stub = config.root / config.course.package_dir / component.module_file
        try:
            tree = ast.parse(stub.read_bytes())
        except (OSError, SyntaxError, ValueError):
            tree = trees.get(component.module_file)
        defined = [
            node.name
            for node in (tree.body if tree is not None else [])
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and not node.name.startswith("_")
        ]
        names[component.name] = {f"{config.package}.{component.module}.{n}" for n in defined}
    return names


def _parsed(files: dict[str, bytes]) -> tuple[dict[str, ast.Module], list[str]]:
    trees, unreadable = {}, []
    for path, data in sorted(files.items()):
        try:
            trees[path] = ast.parse(data, filename=path)  # bytes: PEP 263 cookies and BOMs
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            unreadable.append(path)  # Python cannot import it either
    return trees, unreadable


def _module_name(package: str, path: str) -> tuple[str, bool]:
    """``attention.py`` -> (``t101.attention``, False); ``sub/__init__.py`` -> (``t101.sub``,
    True)."""
    parts = list(PurePosixPath(path).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts.pop()
    return ".".join([package, *parts]), is_package


def _defined_names(trees) -> frozenset[str]:
    """Identifiers the package defines itself: functions, classes, variables and attributes it
    assigns, parameters."""
    names: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
    return frozenset(names)


def _attribute_names(trees) -> frozenset[str]:
    """Names an object of the package can carry: its classes' methods and class attributes,
    and attributes it sets (``self.attn = ...``)."""
    names: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                        names.add(item.name)
                    elif isinstance(item, ast.Assign | ast.AnnAssign):
                        targets = item.targets if isinstance(item, ast.Assign) else [item.target]
                        names |= {t.id for t in targets if isinstance(t, ast.Name)}
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
    return frozenset(names)


def _grader_roots(config: CourseConfig) -> frozenset[str]:
    """``autograder`` and the top-level folders of the course's graders and references (the
    learner's own package is never one)."""
    roots = set(FRAMEWORK_ROOTS)
    course = config.course
    for folder in (config.visible_tests, config.hidden_tests, course.reference_dir):
        if folder is None:
            continue
        try:
            roots.add(Path(folder).resolve().relative_to(config.root.resolve()).parts[0])
        except (ValueError, IndexError):
            continue
    roots.discard(config.package)
    roots.discard(course.package_dir.parts[0])
    return frozenset(roots)


def _shown(config: CourseConfig, file: str) -> str:
    return f"{config.course.package_dir.as_posix()}/{file}"


def _use(config: CourseConfig, finding: Finding, component) -> ForbiddenUse:
    file = _shown(config, finding.file)
    if finding.kind == TAMPER:
        sentence = TAMPERS.format(what=finding.what, file=file, line=finding.line)
        return ForbiddenUse(finding.what, finding.file, finding.line, component.name, sentence)
    own = config.component_for_file(finding.file)
    sentence = USED_AT.format(
        sentence=config.forbidden.sentence(finding.api),
        file=file,
        line=finding.line,
        spelled="" if finding.what == finding.api else SPELLED.format(what=finding.what),
        caller="" if own is not None and own.name == component.name else CALLED_FROM,
    )
    return ForbiddenUse(finding.api, finding.file, finding.line, component.name, sentence)


def _review(config: CourseConfig, finding: Finding, steps: int = STEPS) -> ReviewFlag:
    file = _shown(config, finding.file)
    if finding.what == TOO_COSTLY:
        sentence = REVIEW_COSTLY.format(file=file, steps=f"{steps:,}")
        return ReviewFlag(finding.file, finding.line, finding.what, sentence)
    if finding.kind == REVIEW:
        template = REVIEW_REACH
    elif finding.script_only:
        template = REVIEW_SCRIPT
    elif finding.kind == FORBIDDEN:
        template = REVIEW_UNUSED
    else:
        template = REVIEW_TAMPER_UNUSED
    sentence = template.format(file=file, line=finding.line, what=finding.what)
    return ReviewFlag(finding.file, finding.line, finding.what, sentence)
