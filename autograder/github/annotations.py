"""One annotation per failing component, at a line of the learner's own file.

A component zeroed for a forbidden call points at that call's line. Else the annotation goes
to the line of the component's file that its first failing test's message names, if any (the
line an exception came from, a time-out was stopped at, or a known mistake sits on:
"assignments/t101/feed_forward.py:17").

Else the trusted process, which never imports learner code, parses the file with `ast` to find
where the failing callable is defined, read from the first problem's sentence, which starts
with the call the grader made (`softmax(...)`, `MultiHeadAttention.forward(...)`). When nothing
better is known the annotation goes to the first public function or class of the file, else
line 1.
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
#: The call a problem starts with, after "Importing" or the "The call" capitalised puts first.
_CALL = re.compile(r"^\s*(?:Importing\s+|The call\s+)?([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*))?\s*\(")


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


def named_line(message: str, file: str) -> int:
    """The first line of ``file`` that ``message`` names as "FILE:LINE"; 0 when none."""
    found = re.search(rf"(?<![\w/.]){re.escape(file)}:(\d+)\b", message)
    return int(found.group(1)) if found else 0


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
    first: dict[str, str] = {c.name: "" for c in config.components}  # first failure's message
    for test in result.tests:
        if not test.passed and not first.get(test.component, "-"):
            first[test.component] = test.message
    for component in config.components:
        outcome = outcomes[component.name]
        if outcome.score >= outcome.max_score and outcome.passed == outcome.total > 0:
            continue
        file = str(repo_path / component.module_file)
        line = forbidden_lines.get(component.name, 0) or named_line(first[component.name], file)
        try:  # read as the grader reads learner files: through no link (learner_files)
            source = read_file(Path(package_dir), component.module_file, max_bytes=2**24)
            text = source.decode("utf-8", errors="replace")
            if not 0 < line <= len(text.splitlines()):
                line = def_line(text, outcome.problem)
        except (OSError, TooLarge):
            pass  # the line a message named stays unchecked; else 0
        annotations.append(
            Annotation(
                level="error",
                message=for_log(outcome.problem or outcome.title),
                file=file,
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
