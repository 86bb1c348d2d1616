"""Forbidden calls made inside another forbidden API, through `autograder grade`: results.json
and summary.md tell the learner's own use once, not what torch's code of that API called, and
a direct call from a callback such an API calls is still told with its own line."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder.cli import cli
from autograder.config import load_course
from autograder.reports import summary_md

pytestmark = pytest.mark.hostile

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = Path("assignments") / "t101"
FILE = "multi_head_attention.py"
COMPONENT = "multi_head_attention"
LAYER = "torch.nn.TransformerEncoderLayer"
SDPA = "torch.nn.functional.scaled_dot_product_attention"

# The activation is the learner's own function, called by the layer's code; its attention is
# reached under a name the static check only flags for review, so the worker's record is all
# that tells it.
THROUGH_A_LAYER = """

def _act(h):
    getattr(torch.nn.functional, "noitnetta_tcudorp_tod_delacs"[::-1])(h, h, h)  # OWN_CALL
    return h


def _through_a_layer(x):
    layer = nn.TransformerEncoderLayer(x.shape[-1], 1, 8, dropout=0.0, activation=_act)
    layer.to(x.dtype)(x)  # LAYER_CALLED
"""


def _through_a_layer(folder: Path) -> Path:
    shutil.copytree(ROOT / "examples" / "submissions" / "amara", folder)
    source = (ROOT / "solutions" / "t101" / FILE).read_text(encoding="utf-8")
    first = "        B, L, d_model = query.shape\n"
    assert first in source
    source = source.replace(first, first + "        _through_a_layer(query)\n") + THROUGH_A_LAYER
    (folder / PACKAGE / FILE).write_text(source, encoding="utf-8")
    return folder


def _line(folder: Path, text: str) -> int:
    lines = (folder / PACKAGE / FILE).read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("nested")
    lena = base / "lena"
    shutil.copytree(ROOT / "examples" / "submissions" / "lena", lena)
    layer = _through_a_layer(base / "through_a_layer")
    out = base / "out"
    args = ["grade", str(lena), str(layer), "--out", str(out), "--visible-only"]
    args += ["--course", str(ROOT / "course.toml"), "--component", COMPONENT]
    CliRunner().invoke(cli, args, catch_exceptions=False)
    return base, out


def _use(api: str, line: int) -> dict:
    config = load_course(ROOT / "course.toml")
    sentence = config.forbidden.sentence(api)
    return {
        "api": api,
        "file": FILE,
        "line": line,
        "component": COMPONENT,
        "sentence": f"{sentence} It was called in assignments/t101/{FILE} at line {line}.",
    }


def _section(out: Path, name: str) -> list[str]:
    """The forbidden uses summary.md tells, as bullets: those its "What to fix" gives (their
    tests not listed), then its "Forbidden library calls" section (the uses no test told)."""
    summary = (out / name / "summary.md").read_text(encoding="utf-8")
    zeroed = re.escape(summary_md.ZEROED).replace(re.escape("{count}"), r"\d+")
    item = re.compile(rf"- \*\*[^*]+\*\*: (.*) (?:{zeroed}|{re.escape(summary_md.ZEROED_ONE)})")
    fixes = summary.split(f"{summary_md.TO_FIX_NOTE}\n\n", 1)[1].split("\n\n", 1)[0]
    told = [f"- {m.group(1)}" for m in map(item.fullmatch, fixes.splitlines()) if m]
    if summary_md.FORBIDDEN_HEADING not in summary:
        return told
    section = summary.split(f"{summary_md.FORBIDDEN_HEADING}\n\n", 1)[1].split("\n\n", 1)[0]
    return told + section.splitlines()


def test_calling_an_nn_multihead_attention_is_told_once_where_it_was_built(graded):
    """lena builds nn.MultiheadAttention at line 25 and calls it at line 53, where torch's
    forward calls F.multi_head_attention_forward: one use, hers."""
    _, out = graded
    document = json.loads((out / "lena" / "results.json").read_text(encoding="utf-8"))
    use = _use("torch.nn.MultiheadAttention", 25)
    assert document["extra_data"]["forbidden"] == [use]
    assert _section(out, "lena") == [f"- {use['sentence']}"]
    own = [t for t in document["tests"] if t["tags"] == [COMPONENT]]
    assert own and all(t["score"] == 0 for t in own)


def test_a_direct_call_from_a_callback_inside_a_forbidden_layer_keeps_its_own_line(graded):
    """The layer's own attention (its nn.MultiheadAttention, multi_head_attention_forward and
    scaled_dot_product_attention) is not told; the activation's own call is, at its line."""
    base, out = graded
    folder = base / "through_a_layer"
    document = json.loads((out / folder.name / "results.json").read_text(encoding="utf-8"))
    layer = _use(LAYER, _line(folder, "layer = nn.TransformerEncoderLayer"))
    own_call = _use(SDPA, _line(folder, "# OWN_CALL"))
    assert document["extra_data"]["forbidden"] == [layer, own_call]
    assert _section(out, folder.name) == [f"- {layer['sentence']}", f"- {own_call['sentence']}"]
    own = [t for t in document["tests"] if t["tags"] == [COMPONENT]]
    assert own and all(t["score"] == 0 for t in own)
