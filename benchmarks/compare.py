"""Benchmark: our batch grader against nbgrader autograde and Otter, on the same submissions.

    python benchmarks/compare.py --quick        N = 10 only, one cold-start sample
    python benchmarks/compare.py                N = 10, 100, 1000 (hours on 2 cores)

What it measures, each in one run on this machine:

1. `python -c "import torch"` (median of 3) and a cold `autograder grade` of one submission:
   the target is a cold grade at most 1.5x the torch import.
2. For each N: a class of N learners (copies of examples/submissions, minus kofi, whose
   planted infinite loop would make the run measure time-outs), graded
   * by `autograder grade-class` (default jobs: one per core),
   * by `nbgrader autograde` on the same submissions, the checks written as an nbgrader
     notebook (benchmarks/nb_checks.py, one graded cell per component),
   * by `otter run` of each submission in turn (the same checks as Otter test files), when
     otter-grader is installed (on PATH or in /tmp/otter-venv; see README.md).
   Wall time, time per submission, the ratio to ours, and the peak memory of the whole
   process tree (summed PSS, sampled every 0.2 s or less often: see run_measured); between
   two sizes, the marginal time per submission (the start-up and the class report cancel out).
3. The table goes between the markers in benchmarks/README.md (--no-write to skip).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from nb_checks import CELLS, SETUP  # noqa: E402
from process_measure import Measure, run_measured  # noqa: E402
from results_table import table, write_readme  # noqa: E402

CLASS = ROOT / "examples" / "submissions"
EXCLUDED = {"kofi"}  # the planted hang: we would be timing the time-out, not the grader
#: Where benchmarks/README.md says to install otter-grader (a venv of its own, never ours).
OTTER_VENV = "/tmp/otter-venv/bin/otter"


def learners() -> list[Path]:
    return sorted(p for p in CLASS.iterdir() if p.is_dir() and p.name not in EXCLUDED)


def build_class(folder: Path, n: int) -> list[tuple[str, Path]]:
    """N roster entries (symlinks to the example learners, cycled): (id, repository)."""
    folder.mkdir(parents=True)
    base = learners()
    entries = []
    for i in range(n):
        source = base[i % len(base)]
        name = f"{source.name}-{i:04d}"
        (folder / name).symlink_to(source, target_is_directory=True)
        entries.append((name, source))
    return entries


def bench_ours(roster: Path, work: Path, runs: int) -> Measure:
    """`runs` fresh grade-class runs (a new --out each): the median wall time and the highest
    peak memory. A run of ours is short, so one burst of another process on the machine moves it
    by a larger share than it moves nbgrader's or Otter's minutes; the median of a few runs keeps
    such a burst out of the ratio."""
    measures = []
    for i in range(runs):
        command = [sys.executable, "-m", "autograder", "grade-class", str(roster)]
        command += ["--out", str(work / f"ours{i}"), "--course", str(ROOT / "course.toml"), "-q"]
        measures.append(run_measured(command, cwd=work))
    failed = [m for m in measures if not m.ok]
    if failed:
        return failed[0]
    seconds = statistics.median(m.seconds for m in measures)
    return Measure(seconds, max(m.peak_mb for m in measures), True)


def notebook(assignments: Path) -> dict:
    cells = [_code(SETUP.format(assignments=str(assignments)), None)]
    for name, points, source in CELLS:
        metadata = {
            "grade": True,
            "grade_id": name,
            "locked": True,
            "points": points,
            "schema_version": 3,
            "solution": False,
            "task": False,
        }
        cells.append(_code(source, metadata))
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def _code(source: str, nbgrader: dict | None) -> dict:
    return {
        "cell_type": "code",
        "execution_count": None,
        "id": f"c{abs(hash(source)) % 10**8}",
        "metadata": {"nbgrader": nbgrader} if nbgrader else {},
        "outputs": [],
        "source": source,
    }


def nbgrader_command() -> str | None:
    """nbgrader beside this interpreter (a venv's python run without activating the venv), else
    the one on PATH."""
    beside = Path(sys.executable).with_name("nbgrader")
    return str(beside) if os.access(beside, os.X_OK) else shutil.which("nbgrader")


def bench_nbgrader(entries: list[tuple[str, Path]], work: Path) -> Measure:
    nbgrader = nbgrader_command()
    if nbgrader is None:
        return Measure(0, 0, False, "nbgrader is not installed (pip install -e '.[notebook]')")
    course = work / "nbgrader"
    (course / "source" / "t101").mkdir(parents=True)
    config = course / "nbgrader_config.py"
    config.write_text(
        "c = get_config()\n"
        f"c.CourseDirectory.root = {str(course)!r}\n"
        "c.CourseDirectory.course_id = 't101'\n"
        "c.ExecutePreprocessor.timeout = 120\n"
    )
    first = entries[0][1] / "assignments"
    (course / "source" / "t101" / "t101.ipynb").write_text(json.dumps(notebook(first)))
    generate = subprocess.run(
        [nbgrader, "generate_assignment", "t101", "--force"],
        cwd=course,
        capture_output=True,
        text=True,
    )
    if generate.returncode != 0:
        return Measure(0, 0, False, "generate_assignment failed: " + generate.stderr[-300:])
    for name, repo in entries:
        folder = course / "submitted" / name / "t101"
        folder.mkdir(parents=True)
        (folder / "t101.ipynb").write_text(json.dumps(notebook(repo / "assignments")))
    return run_measured([nbgrader, "autograde", "t101", "--force"], cwd=course)


def otter_test(name: str, points: int, source: str) -> str:
    """An Otter (OK-format) test file: one doctest case that runs the nbgrader cell's code."""
    case = {"code": f">>> exec({source!r})\n", "hidden": False, "locked": False}
    suite = {"cases": [case], "scored": True, "setup": "", "teardown": "", "type": "doctest"}
    test = {"name": name, "points": points, "suites": [suite]}
    return f"OK_FORMAT = True\n\ntest = {test!r}\n"


def bench_otter(entries: list[tuple[str, Path]], work: Path, otter: str | None) -> Measure:
    """`otter run` of each submission (a notebook whose one cell imports the learner's
    package), one after the other, against an autograder zip holding the same checks as the
    nbgrader notebook; all N runs are measured as one process tree."""
    if otter is None:
        return Measure(0, 0, False, "otter-grader is not installed here")
    folder = work / "otter"
    (folder / "tests").mkdir(parents=True)
    for name, points, source in CELLS:
        (folder / "tests" / f"{name}.py").write_text(otter_test(name, points, source))
    generate = subprocess.run(
        [otter, "generate", "--no-config", "--no-requirements", "--no-environment"]
        + ["-t", "tests", "-o", "autograder.zip"],
        cwd=folder,
        capture_output=True,
        text=True,
    )
    if generate.returncode != 0:
        return Measure(0, 0, False, "otter generate failed: " + generate.stderr[-300:])
    script = []
    for name, repo in entries:
        submission = notebook(repo / "assignments")
        submission["cells"] = submission["cells"][:1]  # the setup cell; the checks are tests
        (folder / f"{name}.ipynb").write_text(json.dumps(submission))
        (folder / "out" / name).mkdir(parents=True)
        script.append(f"{otter} run --no-logo -a autograder.zip -o out/{name} {name}.ipynb")
    measure = run_measured(["sh", "-c", " && ".join(script)], cwd=folder)
    scored = sum((folder / "out" / name / "results.json").is_file() for name, _ in entries)
    if scored != len(entries):
        measure.ok, measure.note = False, f"only {scored} of {len(entries)} results.json written"
    return measure


def cold_start(work: Path, samples: int) -> tuple[float, float]:
    torch_times = []
    for _ in range(3):
        start = time.monotonic()
        subprocess.run([sys.executable, "-c", "import torch"], check=True)
        torch_times.append(time.monotonic() - start)
    grade_times = []
    for i in range(samples):
        start = time.monotonic()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "autograder",
                "grade",
                str(CLASS / "amara"),
                "--out",
                str(work / f"cold{i}"),
                "-q",
            ],
            cwd=ROOT,
            check=False,
            capture_output=True,
        )
        grade_times.append(time.monotonic() - start)
    return statistics.median(torch_times), statistics.median(grade_times)


def tool_version(command: list[str], prefix: str) -> str:
    """The version a tool prints (its first output line starting with prefix, after it), or
    "unknown": the table must say which nbgrader and Otter it measured (Otter 7 grades a
    submission in about 9.5 s here, the install before it took 15 to 17 s)."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    for line in (done.stdout + done.stderr).splitlines():
        if line.strip().startswith(prefix):
            return line.strip().removeprefix(prefix).strip()
    return "unknown"


def parse_args() -> argparse.Namespace:
    """The command line (see the module's docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="N = 10 only, one cold sample")
    parser.add_argument("--sizes", type=int, nargs="*", help="class sizes (default 10 100 1000)")
    parser.add_argument("--no-nbgrader", action="store_true", help="skip nbgrader")
    parser.add_argument("--no-write", action="store_true", help="do not touch README.md")
    parser.add_argument(
        "--otter",
        default=shutil.which("otter") or (OTTER_VENV if os.access(OTTER_VENV, os.X_OK) else None),
        help=f"the otter command (default: on PATH, else {OTTER_VENV})",
    )
    parser.add_argument("--no-otter", action="store_true", help="skip otter")
    parser.add_argument(
        "--nbgrader-up-to",
        type=int,
        metavar="N",
        help="run nbgrader only for classes of at most N",
    )
    parser.add_argument(
        "--otter-up-to", type=int, metavar="N", help="run otter only for classes of at most N"
    )
    parser.add_argument(
        "--ours-runs",
        type=int,
        default=3,
        metavar="K",
        help="grade classes of at most 100 K times with ours and report the median (default 3)",
    )
    return parser.parse_args()


def measure_size(n: int, work: Path, args: argparse.Namespace) -> dict:
    """One row of the table: a class of n graded by ours, nbgrader and otter (as asked)."""
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    entries = build_class(work / f"class{n}", n)
    run = work / f"run{n}"
    run.mkdir()
    ours = bench_ours(work / f"class{n}", run, args.ours_runs if n <= 100 else 1)
    print(f"N={n} ours {ours.seconds:.1f} s peak {ours.peak_mb:.0f} MB", flush=True)
    nb = Measure(0, 0, False, "skipped (--no-nbgrader)")
    if args.nbgrader_up_to is not None and n > args.nbgrader_up_to:
        nb = Measure(0, 0, False, f"skipped above N = {args.nbgrader_up_to} (time)")
    elif not args.no_nbgrader:
        nb = bench_nbgrader(entries, run)
        print(f"N={n} nbgrader {nb.seconds:.1f} s peak {nb.peak_mb:.0f} MB {nb.note}", flush=True)
    otter = Measure(0, 0, False, "skipped (--no-otter)")
    if args.otter_up_to is not None and n > args.otter_up_to:
        otter = Measure(0, 0, False, f"skipped above N = {args.otter_up_to} (time)")
    elif not args.no_otter:
        otter = bench_otter(entries, run, args.otter)
        print(
            f"N={n} otter {otter.seconds:.1f} s peak {otter.peak_mb:.0f} MB {otter.note}",
            flush=True,
        )
    return {"n": n, "ours": ours, "nbgrader": nb, "otter": otter, "load": load}


def versions_measured(args: argparse.Namespace) -> str:
    """ "; nbgrader X, otter-grader Y" for the tools this run measured ("" for neither)."""
    versions = []
    if not args.no_nbgrader and nbgrader_command():
        versions.append(
            "nbgrader " + tool_version([nbgrader_command(), "--version"], "nbgrader version")
        )
    if not args.no_otter and args.otter:
        otter_version = tool_version([args.otter, "--version"], "Otter-Grader version:")
        versions.append(f"otter-grader {otter_version}")
    return "; " + ", ".join(versions) if versions else ""


def main() -> None:
    args = parse_args()
    sizes = args.sizes or ([10] if args.quick else [10, 100, 1000])
    work = Path(tempfile.mkdtemp(prefix="t101-bench-"))
    try:
        torch_s, cold_s = cold_start(work, 1 if args.quick else 3)
        print(f"import torch {torch_s:.1f} s, cold grade {cold_s:.1f} s", flush=True)
        rows = [measure_size(n, work, args) for n in sizes]
        text = table(rows, torch_s, cold_s, versions_measured(args))
        print(text)
        if not args.no_write:
            write_readme(text)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
