"""A module learner code writes while it runs, then imports: code the static check never read.

attention.py wrote `_gen.py` into its own folder at import (its text built from numbers), then
ran `from . import _gen`: the module called `scaled_dot_product_attention` and dropped the
recorders' records from the worker's answers, and attention scored 20 of 20 with nothing told
or flagged. An import of a module the submission does not hold as source (a module of the
package no file is, or a top-level module that is neither the package nor installed) now flags
the learner for the instructor's review, as every reach the check cannot follow does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile.static_check_sources import MHA, check, mha

from ..examples.edited import ROOT, edited_reference
from .test_compiled_modules import HIDDEN, WEIGHTS

UNREAD = {
    "relative": ("from . import _gen", "_gen.touch(q)"),
    "relative-from": ("from ._gen import touch", "touch(q)"),
    "absolute": ("import t101._gen", "t101._gen.touch(q)"),
    "absolute-as": ("import t101._gen as gen", "gen.touch(q)"),
    "deeper": ("from .helpers._gen import touch", "touch(q)"),
    "top-level": ("import _gen_not_installed", "_gen_not_installed.touch(q)"),
    "top-level-from": ("from _gen_not_installed import touch", "touch(q)"),
    "in-a-function": ("", "__import__('math') and q"),
    "import-module": ("import importlib", "importlib.import_module('t101.' + '_gen').touch(q)"),
    "import-module-relative": ("import importlib", "importlib.import_module('._gen', 't101')"),
    "aliased": ("from importlib import import_module as im", "im('t101._gen').touch(q)"),
    "dunder-import": ("import math", "__import__('_gen_not_installed').touch(q)"),
}


def attention_graded(learner: Path, out: Path) -> dict:
    """results.json of `autograder grade` of learner's attention alone, hidden tests included."""
    subprocess.run(
        [sys.executable, "-m", "autograder", "grade", str(learner), "--out", str(out)]
        + ["--course", str(ROOT / "course.toml"), "--quiet", "--component", "attention"],
        cwd=ROOT,
        timeout=600,
    )
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("imports, call", list(UNREAD.values()), ids=list(UNREAD))
def test_importing_a_module_no_source_holds_is_flagged_for_review(imports, call):
    source = mha(call, imports)
    if not imports:  # the import sits in the method that runs it
        first = "        q = k = v"
        source = source.replace(first, f"        from . import _gen\n{first}")
    result = check(**{MHA: source})
    assert result.uses == []
    flags = [f for f in result.review if "_gen" in f.sentence]
    assert len(flags) == 1, result.review
    assert flags[0].sentence.startswith(f"assignments/t101/{MHA}.py line ")
    assert flags[0].sentence.endswith("reaches code the grader cannot read from the source.")


NORMAL = {
    "sibling-module": "from . import softmax",
    "sibling-name": "from .softmax import softmax",
    "absolute-sibling": "import t101.softmax",
    "installed": "import numpy.linalg\nfrom scipy import special",
    "standard-library": "import math, itertools\nfrom collections import OrderedDict",
}


@pytest.mark.parametrize("imports", list(NORMAL.values()), ids=list(NORMAL))
def test_importing_what_the_package_holds_or_python_has_is_not_flagged(imports):
    result = check(**{MHA: mha("q", imports)})
    assert result.findings == [], result.findings


def test_importing_a_name_the_package_binds_is_not_flagged():
    result = check(**{MHA: mha("q", "from . import VERSION"), "__init__": "VERSION = 1\n"})
    assert result.findings == [], result.findings


@pytest.mark.parametrize(
    "init", ["def f():\n    _gen = 1\n", "_gen = 1\ndel _gen\n", "class C:\n    _gen = 1\n"]
)
def test_a_name_bound_only_out_of_the_packages_top_level_does_not_hide_the_module(init):
    """`from . import _gen` imports the module _gen.py unless the package binds the name."""
    result = check(**{MHA: mha("_gen.touch(q)", "from . import _gen"), "__init__": init})
    assert [flag.what for flag in result.review] == ["t101._gen"]


#: Where attention.py writes _gen.py at import, how it imports it, the name the check flags.
WRITERS = {
    "beside-itself": ("_os.path.dirname(__file__)", "from . import _gen", "t101._gen"),
    "in-its-home": (
        '_os.environ["HOME"]',
        "import sys\nsys.path.insert(0, _home)\nimport _gen",
        "_gen",
    ),
}


@pytest.mark.parametrize("folder, importing, flagged", list(WRITERS.values()), ids=list(WRITERS))
def test_a_module_written_at_import_then_imported_is_flagged_for_review(
    tmp_path: Path, folder: str, importing: str, flagged: str
):
    """Beside itself, the write fails (the copy of the package is read-only) and attention.py
    with it; in its home, the module runs as written, and the learner is flagged."""
    codes = ", ".join(str(ord(c) ^ 7) for c in HIDDEN)
    writer = (
        f"from .softmax import softmax\nimport os as _os\n\n_home = {folder}\n"
        'with open(_os.path.join(_home, "_gen.py"), "w") as _f:\n'
        f'    _f.write("".join(chr(c ^ 7) for c in [{codes}]))\n'
        f"{importing}\n"
    )
    edits = {
        "attention.py": [
            ("from .softmax import softmax\n", writer),
            (WEIGHTS, WEIGHTS + "    _gen.touch()\n"),
        ]
    }
    learner = edited_reference(tmp_path / "writer", edits)
    results = attention_graded(learner, tmp_path / "grades")
    review = results["extra_data"]["review"]
    assert [(flag["file"], flag["what"]) for flag in review] == [("attention.py", flagged)]
    if flagged == "t101._gen":
        assert all(t["score"] == 0 for t in results["tests"] if t["tags"] == ["attention"])


def test_a_module_rewritten_before_it_is_imported_runs_as_submitted(tmp_path: Path):
    """__init__.py rewrote attention.py in the worker's copy before the harness imported it:
    the text it wrote ran (its ValueError failed every attention test). The copy is read-only
    now, so the write fails (and __init__.py with it) and attention.py runs as submitted."""
    text = 'raise ValueError("REWRITTEN")\n'
    codes = ", ".join(str(ord(c) ^ 7) for c in text)
    learner = edited_reference(tmp_path / "rewriter", {})
    init = learner / "assignments/t101/__init__.py"
    init.write_text(
        init.read_text(encoding="utf-8")
        + "\nimport os as _os\n\n"
        + '_target = _os.path.join(_os.path.dirname(__file__), "attention.py")\n'
        + 'with open(_target, "w") as _f:\n'
        + f'    _f.write("".join(chr(c ^ 7) for c in [{codes}]))\n',
        encoding="utf-8",
    )
    results = attention_graded(learner, tmp_path / "grades")
    assert "REWRITTEN" not in json.dumps(results)
    attention = [t for t in results["tests"] if t["tags"] == ["attention"]]
    assert attention and all(t["status"] == "passed" for t in attention)
