"""The static check through `autograder grade`: a correct multi-head attention that keeps the
aten kernel by it scores zero with a sentence naming file, line and spelling, and a dynamic
reach costs nothing but shows in results.json, summary.md and the terminal's summary."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder.cli import cli
from autograder.results import REVIEW_LINE

pytestmark = pytest.mark.hostile

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path("assignments") / "t101"
KERNEL = "torch.ops.aten._scaled_dot_product_attention_math"


def _submission(base: Path, name: str, module: str, edit) -> Path:
    folder = base / name
    shutil.copytree(ROOT / "examples" / "submissions" / "amara", folder)
    shutil.copy(ROOT / "solutions" / "t101" / f"{module}.py", folder / PACKAGE / f"{module}.py")
    path = folder / PACKAGE / f"{module}.py"
    path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("static")
    kept = _submission(
        base, "kept_kernel", "multi_head_attention", lambda s: s + f"\n_fast = {KERNEL}\n"
    )
    dynamic = _submission(
        base,
        "dynamic",
        "feed_forward",
        lambda s: s.replace(
            "torch.relu(self.W_1(x))", 'getattr(torch, "re" + self.act)(self.W_1(x))'
        ).replace("super().__init__()", 'super().__init__()\n        self.act = "lu"'),
    )
    borrowed = _submission(
        base,
        "borrowed_from_softmax",
        "multi_head_attention",
        lambda s: s.replace(
            "from torch import nn", "from torch import nn\n\nfrom .softmax import fast"
        ),
    )
    softmax = borrowed / PACKAGE / "softmax.py"
    softmax.write_text(
        (ROOT / "solutions" / "t101" / "softmax.py").read_text(encoding="utf-8")
        + "\nimport torch.nn.functional as F\n\nfast = F.scaled_dot_product_attention\n",
        encoding="utf-8",
    )
    out = base / "out"
    args = [
        "grade",
        str(kept),
        str(dynamic),
        str(borrowed),
        "--out",
        str(out),
        "--course",
        str(ROOT / "course.toml"),
    ]
    args += ["--visible-only", "--component", "multi_head_attention", "--component", "feed_forward"]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    return out, result


def _document(out: Path, name: str) -> dict:
    return json.loads((out / name / "results.json").read_text(encoding="utf-8"))


def test_a_kernel_kept_in_the_file_zeroes_multi_head_attention(graded):
    document = _document(graded[0], "kept_kernel")
    mha = [t for t in document["tests"] if t["tags"] == ["multi_head_attention"]]
    assert mha and all(t["score"] == 0 for t in mha)
    assert all(f"(as {KERNEL})" in t["output"] for t in mha)
    ff = [t for t in document["tests"] if t["tags"] == ["feed_forward"]]
    assert ff and all(t["status"] == "passed" for t in ff)
    [use] = document["extra_data"]["forbidden"]
    assert (use["file"], use["component"]) == ("multi_head_attention.py", "multi_head_attention")


def test_a_module_variable_of_a_cheaper_component_zeroes_the_component_using_it(graded):
    """softmax.py keeps the library's attention in a module variable and multi-head attention
    imports it: multi-head attention scores zero, though softmax is not graded here."""
    document = _document(graded[0], "borrowed_from_softmax")
    mha = [t for t in document["tests"] if t["tags"] == ["multi_head_attention"]]
    assert mha and all(t["score"] == 0 for t in mha)
    uses = {(u["file"], u["component"]) for u in document["extra_data"]["forbidden"]}
    assert ("multi_head_attention.py", "multi_head_attention") in uses


def test_a_dynamic_reach_is_flagged_for_review_and_costs_nothing(graded):
    out, result = graded
    document = _document(out, "dynamic")
    ff = [t for t in document["tests"] if t["tags"] == ["feed_forward"]]
    assert ff and all(t["status"] == "passed" for t in ff)
    [flag] = document["extra_data"]["review"]
    assert (flag["file"], flag["what"]) == ("feed_forward.py", "getattr(torch, 're' + self.act)")
    assert f"{REVIEW_LINE} assignments/t101/feed_forward.py line " in document["output"]
    summary = (out / "dynamic" / "summary.md").read_text(encoding="utf-8")
    assert "## Flagged for your instructor's review" in summary
