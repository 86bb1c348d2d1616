"""Running nbgrader on a learner notebook the way module code runs: isolated and limited.

- One run is a private temporary directory (mode 0700): a copy of the course folder, each
  learner's notebook (size-capped), a stub `autograder` package for runner.py, HOME, the
  runner's report.json and output.log.
- The runner gets the module worker's treatment (runtime/harness/worker_handle.py: environment,
  own session, rlimits, a wall-clock kill of the whole group) and its confinement
  (runtime/harness/isolation.py, SECURITY.md): with namespaces, the course root, the harness's
  folder and home and the learners' original notebooks are covered before nbgrader starts.
- The autograded notebook kept for the learner has its hidden tests cut out and its outputs
  scrubbed of quoted hidden lines (hidden.py).

Layout and confinement: docs/internals/notebook-mistakes.md#the-sandboxed-nbgrader-run.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.notebook.course import CONFIG_FILE, NotebookAssignment
from autograder.notebook.hidden import hidden_lines, without_hidden_tests
from autograder.runtime.harness import isolation
from autograder.runtime.harness.isolation import confinement_plan
from autograder.runtime.harness.worker_launch import (
    copy_worker_side,
    kill_group,
    worker_environment,
)

MAX_NOTEBOOK_BYTES = 5 * 1024 * 1024
MAX_REPORT_BYTES = 2 * 1024 * 1024
STUDENT = "learner{index}"  # nbgrader's student ids; learners' own names never reach nbgrader
#: Seconds for Python, nbgrader and the kernel to start and for nbgrader to generate the
#: assignment, before any learner cell runs (a loaded 2-core machine needs most of it).
STARTUP_ALLOWANCE = 180.0
#: What the run imports of ours (autograder/notebook/<name>), copied into framework/.
NOTEBOOK_DIR = Path(__file__).resolve().parent
FRAMEWORK_FILES = ("runner.py", "preprocessors.py")
_STUB_INIT = '"""Only the notebook runner, its preprocessors and autograder.runtime are here."""\n'


@dataclass
class LearnerReport:
    """What nbgrader reported for one learner's notebook: its grade cells' scores, and the
    autograded notebook (hidden tests and all; None when nbgrader wrote none we could read)."""

    ok: bool
    cells: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""  # nbgrader's traceback when it could not grade this notebook
    document: dict[str, Any] | None = None


@dataclass
class RunReport:
    """What one sandboxed nbgrader run produced: `learners` maps each name given to its report
    (absent when nbgrader never got to it)."""

    ok: bool
    learners: dict[str, LearnerReport] = field(default_factory=dict)
    log: str = ""
    killed: bool = False  # the wall-clock limit ran out
    exit_status: int | None = None
    pid: int = 0  # the runner's process (and process group) id
    wall_timeout: float = 0.0  # the wall-clock limit the run had, in seconds
    isolation: dict[str, Any] = field(default_factory=dict)  # what isolation.confine applied


def run_nbgrader(
    assignment: NotebookAssignment,
    *,
    notebooks: dict[str, Path],
    mode: str,
    cell_timeout: float,
    memory_mb: int,
    file_mb: int = 64,
    wall_timeout: float | None = None,
    keep: Path | None = None,
    hide: Sequence[Path] = (),
) -> RunReport:
    """Run the runner in `mode` ("release", or "autograde" of each of `notebooks`, by learner
    name) on one private copy of the course folder. `keep`: a folder that receives each
    autograded notebook as `<name>.ipynb` (autograde) or the released notebook and its data
    files (release). `hide`: more folders the run must not see (e.g. the learners'
    repositories); the course root and each notebook's folder are always hidden.

    Learners graded in one run share one sandbox: grade mutually untrusted learners in separate
    runs (`autograder grade` does); batching is for notebooks of one origin (tests, examples)."""
    ids = {name: STUDENT.format(index=i) for i, name in enumerate(notebooks, start=1)}
    base = Path(tempfile.mkdtemp(prefix="autograder-nb-")).resolve()
    try:
        course = _private_course(base, assignment, notebooks, ids)
        home = base / "home"
        home.mkdir()
        framework = _framework(base)
        level, prefix = isolation.probe()
        course_root = assignment.course_dir.parent
        covered = [course_root, *hide, *(Path(n).resolve().parent for n in notebooks.values())]
        plan = confinement_plan(level, base, covered)
        code_cells = _count_code_cells(assignment.source_notebook)
        if wall_timeout is None:
            per_learner = STARTUP_ALLOWANCE / 3 + cell_timeout * (code_cells + 2)
            wall_timeout = STARTUP_ALLOWANCE + per_learner * len(notebooks)
        report_path = base / "report.json"
        command = [*prefix, sys.executable, "-s", "-B", "-m", "autograder.notebook.runner", mode]
        command += [str(course), assignment.assignment, ",".join(ids.values())]
        command += [str(memory_mb), str(file_mb)]
        command += [str(cell_timeout), str(report_path), json.dumps(plan)]
        environment = notebook_environment(home, framework)
        process, killed = _run_runner(command, base, course, environment, wall_timeout)
        report = _read_report(report_path, ids, killed=killed, status=process.returncode)
        report.log += _tail(base / "output.log")
        report.wall_timeout = wall_timeout
        report.pid = process.pid
        _read_documents(course, assignment, ids, report)  # none outside autograde
        if keep is not None and report.ok:
            _keep(course, assignment, mode, keep, report)
        return report
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _private_course(
    base: Path, assignment: NotebookAssignment, notebooks: dict[str, Path], ids: dict[str, str]
) -> Path:
    """The course folder the runner sees, under ``base``: its nbgrader configuration, the
    source notebook and each learner's notebook as nbgrader's submitted/<id>/ layout."""
    course = base / "course"
    course.mkdir()
    shutil.copy2(assignment.course_dir / CONFIG_FILE, course / CONFIG_FILE)
    shutil.copytree(
        assignment.source_folder,
        course / "source" / assignment.assignment,
        ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"),
    )
    for name, notebook in notebooks.items():
        submitted = course / "submitted" / ids[name] / assignment.assignment
        submitted.mkdir(parents=True)
        shutil.copyfile(notebook, submitted / f"{assignment.assignment}.ipynb")
    return course


def _run_runner(
    command: list[str], base: Path, course: Path, env: dict[str, str], wall_timeout: float
) -> tuple[subprocess.Popen, bool]:
    """Run the runner's command in its own session, its output into ``base``/output.log; the
    process (ended, its group killed) and whether ``wall_timeout`` passed first."""
    with open(base / "output.log", "ab") as capture:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=capture,
            stderr=capture,
            cwd=course,
            env=env,
            start_new_session=True,
        )
        killed = False
        try:
            process.wait(timeout=wall_timeout)
        except subprocess.TimeoutExpired:
            killed = True
        finally:
            kill_group(process)
    return process, killed


def notebook_environment(home: Path, framework: Path) -> dict[str, str]:
    """The runner's whole environment: the module worker's allow-list (no tokens or secrets),
    plus private Jupyter folders and headless plots. `framework`: the folder on PYTHONPATH."""
    env = worker_environment(home, framework)
    env.update(
        MPLBACKEND="Agg",
        MPLCONFIGDIR=str(home / "matplotlib"),
        IPYTHONDIR=str(home / "ipython"),
        JUPYTER_CONFIG_DIR=str(home / "jupyter" / "config"),
        JUPYTER_DATA_DIR=str(home / "jupyter" / "data"),
        JUPYTER_RUNTIME_DIR=str(home / "jupyter" / "runtime"),
        JUPYTER_PLATFORM_DIRS="1",
    )
    return env


def _framework(base: Path) -> Path:
    """base/framework: a stub `autograder` package holding the runner, the preprocessors that
    nbgrader_config.py names and a copy of the worker side of autograder/runtime (confine, the
    rlimits)."""
    framework = base / "framework"
    package = framework / "autograder"
    (package / "notebook").mkdir(parents=True)
    (package / "__init__.py").write_text(_STUB_INIT)
    (package / "notebook" / "__init__.py").write_text(_STUB_INIT)
    for name in FRAMEWORK_FILES:
        shutil.copyfile(NOTEBOOK_DIR / name, package / "notebook" / name)
    copy_worker_side(package / "runtime")
    return framework


def _count_code_cells(path: Path) -> int:
    document = json.loads(path.read_text(encoding="utf-8"))
    return sum(1 for cell in document.get("cells", []) if cell.get("cell_type") == "code")


def _read_report(path: Path, ids: dict[str, str], *, killed: bool, status: int | None) -> RunReport:
    data: dict[str, Any] = {}
    try:
        if path.is_file() and path.stat().st_size <= MAX_REPORT_BYTES:
            loaded = json.loads(path.read_text(encoding="utf-8"))
            data = loaded if isinstance(loaded, dict) else {}
    except (OSError, ValueError):
        data = {}
    students = data.get("students")
    students = students if isinstance(students, dict) else {}
    learners = {}
    confined = data.get("isolation")
    for name, student in ids.items():
        got = students.get(student)
        if isinstance(got, dict):
            cells = got.get("cells")
            learners[name] = LearnerReport(
                ok=bool(got.get("ok")),
                cells=[c for c in cells if isinstance(c, dict)] if isinstance(cells, list) else [],
                error=str(got.get("error", "")),
            )
    return RunReport(
        ok=bool(data.get("ok")) and not killed,
        learners=learners,
        log=str(data.get("log", "")),
        killed=killed,
        exit_status=status,
        isolation=confined if isinstance(confined, dict) else {},
    )


def _tail(path: Path, limit: int = 20_000) -> str:
    try:
        with open(path, "rb") as file:
            file.seek(max(0, path.stat().st_size - limit))
            return file.read().decode("utf-8", "replace")
    except OSError:
        return ""


def _read_documents(
    course: Path, assignment: NotebookAssignment, ids: dict[str, str], report: RunReport
) -> None:
    """Each graded learner's autograded notebook into their report (size-capped: learner code
    wrote it); nothing when the run autograded none (a release)."""
    for name, student in ids.items():
        learner = report.learners.get(name)
        graded = course / "autograded" / student / assignment.assignment
        notebook = graded / f"{assignment.assignment}.ipynb"
        if learner is None or not notebook.is_file():
            continue
        if notebook.stat().st_size > MAX_NOTEBOOK_BYTES * 4:
            continue
        try:
            document = json.loads(notebook.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(document, dict) and isinstance(document.get("cells"), list):
            learner.document = document


def _keep(
    course: Path,
    assignment: NotebookAssignment,
    mode: str,
    keep: Path,
    report: RunReport,
) -> None:
    keep.mkdir(parents=True, exist_ok=True)
    if mode == "release":
        released = course / "release" / assignment.assignment
        for item in sorted(released.iterdir()):
            if item.is_file():
                shutil.copyfile(item, keep / item.name)
        return
    hidden = hidden_lines(json.loads(assignment.source_notebook.read_text("utf-8")))
    for name, learner in report.learners.items():
        if learner.document is not None:
            mine = without_hidden_tests(copy.deepcopy(learner.document), hidden)
            text = json.dumps(mine, indent=1, ensure_ascii=False)
            (keep / f"{name}.ipynb").write_text(text + "\n", encoding="utf-8")
