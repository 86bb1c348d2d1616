"""The learner sources and helpers of the static-check tests (test_static_check.py,
test_static_check_reach.py): the references with some modules replaced, an MHA template whose
call a test chooses, and what a check charged to each component."""

from __future__ import annotations

import textwrap
from pathlib import Path

from autograder.config import load_course
from autograder.static_check import check_sources

ROOT = Path(__file__).resolve().parents[2]
COURSE = load_course(ROOT / "course.toml")
REFERENCE = {p.name: p.read_bytes() for p in (ROOT / "solutions" / "t101").glob("*.py")}
MHA = "multi_head_attention"

MHA_TEMPLATE = """
import torch
from torch import nn
{imports}


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0, bias=True):
        super().__init__()
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)
        self.w = [self.W_q.weight, self.W_o.weight]
{init}

    def forward(self, query, key, value, mask=None):
        q = k = v = self.W_q(query)
        out = {call}
        return self.W_o(out), None
"""


def check(**modules: str):
    """The static check of the references with some modules replaced (name -> source)."""
    files = dict(REFERENCE)
    files.update({f"{name}.py": textwrap.dedent(src).encode() for name, src in modules.items()})
    return check_sources(COURSE, files)


def mha(call: str, imports: str = "", init: str = "") -> str:
    """MHA_TEMPLATE with its forward's `call`, extra imports and lines in __init__."""
    init = textwrap.indent(textwrap.dedent(init), " " * 8) if init else ""
    return MHA_TEMPLATE.format(imports=imports, call=call, init=init)


def charged(result) -> dict[str, set[str]]:
    """The forbidden APIs a check charged, by component."""
    out: dict[str, set[str]] = {}
    for use in result.uses:
        out.setdefault(use.component, set()).add(use.api)
    return out


F_ = "import torch.nn.functional as F"
SDPA = "scaled_dot_product_attention"
MATH = "_scaled_dot_product_attention_math"
