"""One annotation per failing component, at its function in the learner's own file.

The trusted process never imports learner code: it parses the file with `ast` to find where
the failing callable is defined. The callable is read from the first problem's sentence, which
starts with the call the grader made (`softmax(...)`, `MultiHeadAttention.forward(...)`); a
component zeroed for a forbidden call points at that call's line instead. When nothing better
is known the annotation goes to the first public function or class of the file, else line 1.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path, PurePosixPath

from autograder.config import CourseConfig
from autograder.github.workflow_commands import Annotation
from autograder.learner_files import TooLarge, read_file
from autograder.learner_text import for_log
from autograder.results import ComponentResult, GradeResult

TITLE = "{title}: {failed} of {total} tests failed"
TITLE_ZEROED = "{title}: scores zero"
_CALL = re.compile(r"^\s*(?:Importing\s+)?([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*))?\s*\(")


def def_line(source: str, problem: str) -> int:
    """The line where the callable named at the start of problem is defined in source."""
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        return max(error.lineno or 1, 1)
    tops = {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }
    match = _CALL.match(problem)
    if match and match.group(1) in tops:
        node = tops[match.group(1)]
        method = match.group(2) or ("__init__" if isinstance(node, ast.ClassDef) else None)
        if isinstance(node, ast.ClassDef) and method:
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name == method:
                    return item.lineno
        return node.lineno
    public = [node for name, node in tops.items() if not name.startswith("_")]
    return public[0].lineno if public else 1


def component_annotations(
    config: CourseConfig, result: GradeResult, package_dir: Path
) -> list[Annotation]:
    """An error annotation for every component that lost points, in course order."""
    repo_path = PurePosixPath(config.course.package_dir)
    # A line in the component's own file; a call charged from a helper file has its line there.
    forbidden_lines = {
        u.component: u.line
        for u in result.forbidden
        if u.component and config.component_for_file(u.file) is not None
    }
    annotations = []
    # By name: the grade also has components course.toml does not list (a notebook), which
    # have no module file to annotate.
    outcomes = {outcome.name: outcome for outcome in result.components}
    for component in config.components:
        outcome = outcomes[component.name]
        if outcome.score >= outcome.max_score and outcome.passed == outcome.total > 0:
            continue
        line = forbidden_lines.get(component.name, 0)
        if not line:
            try:  # read as the grader reads learner files: through no link (learner_files)
                source = read_file(Path(package_dir), component.module_file, max_bytes=2**24)
                line = def_line(source.decode("utf-8", errors="replace"), outcome.problem)
            except (OSError, TooLarge):
                line = 0
        annotations.append(
            Annotation(
                level="error",
                message=for_log(outcome.problem or outcome.title),
                file=str(repo_path / component.module_file),
                line=line,
                title=_title(outcome),
            )
        )
    return annotations


def _title(outcome: ComponentResult) -> str:
    if outcome.forbidden or outcome.total == 0:
        return TITLE_ZEROED.format(title=outcome.title)
    return TITLE.format(
        title=outcome.title, failed=outcome.total - outcome.passed, total=outcome.total
    )
