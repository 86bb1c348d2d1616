"""The hostile corpus as data: each case is the correct example submission (amara) with one file
patched by a hostile variant; cases that hit independent components share one grading run.

Independent components: softmax, multi_head_attention, feed_forward and add_norm import nothing
of each other (attention imports softmax; encoder imports the three sublayers), so one run can
patch all four and still expect each one's score on its own.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from tests.processes import running_with

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "submissions" / "amara"
PACKAGE_DIR = Path("assignments") / "t101"
#: Course points of the components the corpus patches.
POINTS = {
    "softmax": 10,
    "attention": 20,
    "multi_head_attention": 25,
    "feed_forward": 10,
    "add_norm": 10,
    "encoder": 25,
}
#: Visible grader tests per component (a run's time bound is computed from them).
MAX_TESTS_PER_COMPONENT = 20
#: Replaced in a case's code: a token unique to this test session (names leftover processes).
MARKER = "@MARKER@"
#: Replaced in a case's code: the folder the reports go to (a learner who guessed it).
OUT = "@OUT@"
#: Replaced in a case's code: the course root (a learner who guessed where the grader lives).
COURSE = "@COURSE@"

#: The class or function each component's file must define, to patch its call.
TARGET = {
    "softmax": "softmax",
    "multi_head_attention": "MultiHeadAttention.forward",
    "feed_forward": "PositionwiseFeedForward.forward",
    "add_norm": "AddNorm.forward",
}


@dataclass(frozen=True)
class Case:
    """One hostile variant of one component file.

    Attributes:
        name: the case's id.
        component: the component whose file is patched.
        how: "append" (code added at the end: it runs at import, or replaces the call through
            ``_hostile``), "call" (the component's function or forward replaced by ``code``, a
            function body), "source" (the whole file replaced by ``code``, bytes or text),
            "delete" (the file removed), "layout" (the package moved to the repository root).
        code: the hostile code.
        expect: "zero" (the component loses all its points: its module cannot be imported, or
            it used a forbidden API), "less" (the tests that run the hostile code lose their
            points; a test that never calls it, such as a parameter count, may pass) or "full".
        phrase: a phrase of the sentence the learner gets (in the first failing test's output).
    """

    name: str
    component: str
    how: str
    code: str | bytes = ""
    expect: str = "less"
    phrase: str = ""

    @property
    def file(self) -> str:
        return f"{self.component}.py"


@dataclass(frozen=True)
class Run:
    """Cases graded together: each patches a different independent component."""

    name: str
    cases: tuple[Case, ...]
    neighbours: tuple[str, ...] = ()  # unpatched components graded too: they keep full points
    components: tuple[str, ...] = field(default=())

    def graded(self) -> list[str]:
        return [*(c.component for c in self.cases), *self.neighbours]


def build(run: Run, dest: Path, *, marker: str, out: Path) -> Path:
    """The submission of run under dest: amara with each case's patch; returns its folder."""
    submission = dest / run.name
    shutil.copytree(EXAMPLE, submission, ignore=shutil.ignore_patterns("__pycache__"))
    for case in run.cases:
        apply(case, submission / PACKAGE_DIR, marker=marker, out=out)
    if any(case.how == "layout" for case in run.cases):  # t101/ at the repository root
        shutil.move(submission / PACKAGE_DIR, submission / PACKAGE_DIR.name)
        shutil.rmtree(submission / PACKAGE_DIR.parts[0])
    return submission


def apply(case: Case, package: Path, *, marker: str, out: Path) -> None:
    path = package / case.file
    code = case.code
    if isinstance(code, str):
        code = code.replace(MARKER, marker).replace(OUT, str(out)).replace(COURSE, str(ROOT))
    if case.how == "layout":
        return  # build() moves the whole package
    if case.how == "delete":
        path.unlink()
    elif case.how == "source":
        path.write_bytes(code if isinstance(code, bytes) else code.encode())
    elif case.how == "append":
        with path.open("a", encoding="utf-8") as f:
            f.write("\n" + code + "\n")
    elif case.how == "call":
        body = "".join(f"    {line}\n" for line in code.splitlines())
        owner, _, method = TARGET[case.component].partition(".")
        with path.open("a", encoding="utf-8") as f:
            f.write(f"\n\ndef _hostile(*args, **kwargs):\n{body}\n\n")
            f.write(f"{owner}.{method} = _hostile\n" if method else f"{owner} = _hostile\n")
    else:
        raise ValueError(f"Case {case.name}: unknown patch kind {case.how!r}.")


def leftover_processes(marker: str) -> list[str]:
    """Command lines of live processes, anywhere on the machine, that mention marker."""
    return list(running_with(marker).values())
