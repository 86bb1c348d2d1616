"""The trusted side's static check finds a forbidden API under any spelling a learner can write.

The learner here has read the framework: they know the runtime recorder wraps names, so they
reach the same kernels under other names (aten operators, C bindings, the module a class is
defined in), build the name at run time or unwrap the recorder. Each spelling must zero exactly
the components whose code path it serves; what a normal learner writes is never flagged. Calls
hidden in other files: test_static_check_reach.py.
"""

from __future__ import annotations

import pytest

from autograder.static_check.scan import TAMPER
from tests.hostile.static_check_sources import F_, MATH, MHA, SDPA, charged, check, mha

SPELLINGS = {
    "alias": (F_, f"F.{SDPA}(q, k, v)"),
    "from-import": ("from torch.nn import functional", f"functional.{SDPA}(q, k, v)"),
    "renamed-nn": ("from torch import nn as q_", "q_.MultiheadAttention(4, 2)(q, k, v)[0]"),
    "imported-function": (f"from torch.nn.functional import {SDPA} as attend", "attend(q, k, v)"),
    "aten": ("", f"torch.ops.aten.{SDPA}.default(q, k, v)"),
    "aten-math": ("", f"torch.ops.aten.{MATH}(q, k, v)[0]"),
    "variable-functions": ("", f"torch._C._VariableFunctions.{MATH}(q, k, v)[0]"),
    "c-nn": ("", f"torch._C._nn.{SDPA}(q, k, v)"),
    "native-mha": ("", "torch._native_multi_head_attention(q, k, v, 4, 2, *self.w)[0]"),
    "defining-module": ("", "torch.nn.modules.activation.MultiheadAttention(4, 2)(q, k, v)[0]"),
    "flash-for-cpu": ("", "torch._scaled_dot_product_flash_attention_for_cpu(q, k, v)[0]"),
    "future-kernel": ("", "torch.ops.aten._scaled_dot_product_fancy_attention(q, k, v)[0]"),
    "functional-mha": (F_, "F.multi_head_attention_forward(q, k, v, *self.w)[0]"),
    "getattr-literal": (F_, f'getattr(F, "{SDPA}")(q, k, v)'),
    "getattr-concatenated": (F_, 'getattr(F, "scaled_" + "dot_product_attention")(q, k, v)'),
    "getattr-f-string": (F_, "getattr(F, f\"scaled_dot_product_{'attention'}\")(q, k, v)"),
    "getattr-joined": (F_, 'getattr(F, "_".join(["scaled", "dot", "product", "attention"]))(q)'),
    "import-module": (
        "import importlib",
        f'importlib.import_module("torch.nn").functional.{SDPA}(q)',
    ),
    "dunder-import": ("", f'__import__("torch").nn.functional.{SDPA}(q, k, v)'),
    "sys-modules": ("import sys", f'sys.modules["torch.nn.functional"].{SDPA}(q, k, v)'),
    "sys-modules-get": ("import sys", f'sys.modules.get("torch.nn.functional").{SDPA}(q, k, v)'),
    "eval-literal": (F_, f'eval("F.{SDPA}")(q, k, v)'),
    "vars": (F_, f'vars(F)["{SDPA}"](q, k, v)'),
    "dunder-dict": (F_, f'F.__dict__["{SDPA}"](q, k, v)'),
    "globals": ("", f'globals()["torch"].nn.functional.{SDPA}(q, k, v)'),
    "in-a-list": (F_, f"[F][0].{SDPA}(q, k, v)"),
    "in-a-dict": (F_, f'{{"f": F}}["f"].{SDPA}(q, k, v)'),
    "attrgetter": ("import operator", f'operator.attrgetter("nn.functional.{SDPA}")(torch)(q)'),
    "reduce-getattr": (
        "import functools",
        f'functools.reduce(getattr, ["nn", "functional", "{SDPA}"], torch)(q, k, v)',
    ),
    "dunder-getattr": ("", f'torch.ops.aten.__getattr__("{MATH}")(q, k, v)[0]'),
    "operator-by-string": ("", f'torch._C._jit_get_operation("aten::{MATH}")'),
    "lambda": (F_, f"(lambda: F)().{SDPA}(q, k, v)"),
    "walrus": ("", f"(G := torch.nn.functional).{SDPA}(q, k, v)"),
    "conditional": (F_, f"(F if q is not None else None).{SDPA}(q, k, v)"),
    "star-import": ("from torch.nn.functional import *", f"{SDPA}(q, k, v)"),
    "torchscript-source": (
        "",
        'torch.jit.CompilationUnit("def f(q: Tensor, k: Tensor, v: Tensor):\\n'
        f'    return torch.ops.aten.{MATH}(q, k, v)[0]\\n").f(q, k, v)',
    ),
    "torchscript-lang-keyword": (
        "from torch.jit import CompilationUnit as Unit",
        f'Unit(lang="def f(q: Tensor):\\n    return torch.ops.aten.{MATH}(q, q, q)[0]\\n").f(q)',
    ),
}


@pytest.mark.parametrize("imports, call", list(SPELLINGS.values()), ids=list(SPELLINGS))
def test_every_spelling_of_a_forbidden_api_zeroes_multi_head_attention_only(imports, call):
    result = check(**{MHA: mha(call, imports)})
    assert set(charged(result)) == {MHA}, result.findings
    [use, *_] = result.uses
    assert use.file == f"{MHA}.py" and use.line > 0
    assert " is a library implementation of it, so this component scores zero." in use.sentence
    assert f"assignments/t101/{MHA}.py at line {use.line}" in use.sentence


def test_a_module_kept_on_the_object_is_followed():
    kept = mha(f"self.F.{SDPA}(q, k, v)", init="self.F = torch.nn.functional")
    result = check(**{MHA: kept})
    assert set(charged(result)) == {MHA}


def test_a_module_returned_by_a_helper_is_followed():
    source = mha("_library().scaled_dot_product_attention(q, k, v)") + (
        "\n\ndef _library():\n    return torch.nn.functional\n"
    )
    assert set(charged(check(**{MHA: source}))) == {MHA}


def test_literal_code_run_by_exec_is_checked_as_written():
    call = 'exec("out = torch.nn.functional.scaled_dot_product_attention(q, k, v)") or q'
    assert set(charged(check(**{MHA: mha(call)}))) == {MHA}


def test_the_sentence_names_the_spelling_and_the_api_it_stands_for():
    [use] = check(**{MHA: mha("torch.ops.aten._native_multi_head_attention(q, k, v)[0]")}).uses
    assert use.api == "torch._native_multi_head_attention"
    assert "(as torch.ops.aten._native_multi_head_attention)" in use.sentence


TAMPERING = {
    "unwrap": (F_, f"F.{SDPA}.__wrapped__(q, k, v)"),
    "unwrap-getattr": (F_, 'getattr(F.softmax, "__wrapped__")(q, -1)'),
    "guard-module": ("import autograder.runtime.guard", "q"),
    "guard-from": ("from autograder.runtime import guard", "guard.drain() and q"),
    "guard-by-sys-modules": ("import sys", 'sys.modules["autograder.runtime.guard"] and q'),
    "module-table-write": ("import sys", '(sys.modules.__setitem__("torch", None), q)[1]'),
    "module-table-pop": ("import sys", 'sys.modules.pop("autograder", None) or q'),
    "graders": ("import tests.graders.support.inputs", "q"),
    "references": ("from solutions.t101 import multi_head_attention as ref", "q"),
    "function-mode-off": ("", "torch._C.DisableTorchFunction() and q"),
    "recorder-mark": ("", 'getattr(q, "_autograder_guarded", q)'),
}


@pytest.mark.parametrize("imports, call", list(TAMPERING.values()), ids=list(TAMPERING))
def test_reaching_into_the_grader_zeroes_the_component_and_says_so(imports, call):
    result = check(**{MHA: mha(call, imports)})
    tampering = [u for u in result.uses if "reaches into the grader itself" in u.sentence]
    assert tampering and {u.component for u in tampering} == {MHA}, result.findings


def test_writing_into_the_module_table_is_tampering():
    source = mha("q") + '\nimport sys\nsys.modules["torch.nn.functional"] = None\n'
    assert {f.kind for f in check(**{MHA: source}).findings} == {TAMPER}


REVIEWED = {
    "getattr-on-a-module": ("", "getattr(torch.nn.functional, self.name)(q)"),
    "getattr-obfuscated": ("", 'getattr(self, "".join(map(chr, [87, 95, 113])))(q)'),
    "getattr-reversed": ("", 'getattr(torch, "ecalp_ni_"[::-1])'),
    "import-by-name": ("import importlib", "importlib.import_module(self.name).f(q)"),
    "eval-built": ("", "eval(self.code)"),
    "frames": ("import sys", "sys._getframe(1).f_back and q"),
    "gc": ("import gc", "gc.get_referents(q) and q"),
    "ctypes": ("import ctypes", "q"),
    "closure": ("import torch.nn.functional as F", "F.softmax.__closure__ and q"),
    "descriptors": ("import os", "os.dup2(1, 2) or q"),
    "builtins": ("", '__builtins__["getattr"](q, "T")'),
    "sys-modules-by-name": ("import sys", "sys.modules[self.name].f(q)"),
    "torchscript-built": ("", "torch.jit.CompilationUnit(self.code).f(q)"),
    "torchscript-defined-later": ("", 'torch.jit.CompilationUnit().define("") or q'),
    "torchscript-archive": ("", 'torch.jit.load("attend.pt")(q)'),
    "cpp-extension": (
        "from torch.utils import cpp_extension",
        'cpp_extension.load_inline("a", "")',
    ),
    "operator-library": ("", 'torch.ops.load_library("attend.so") or q'),
    "globals-by-name": ("", 'getattr(self.W_q.forward, "__globals__") and q'),
    "globals-by-built-name": ("", 'getattr(self.W_q.forward, "__glo" + "bals__") and q'),
    "globals-name-held": ("", 'getattr(self.W_q.forward, self.n or "__globals__") and q'),
    "frame-globals-by-name": ("", 'getattr(self.frame, "f_globals") and q'),
    "closure-by-name": ("", 'getattr(self.W_q.forward, "__closure__") and q'),
    "code-by-getattribute": ("", 'object.__getattribute__(self.W_q.forward, "__code__") and q'),
    "attrgetter-globals": ("import operator", 'operator.attrgetter("__globals__")(self.f) and q'),
    "closure-variables": ("import inspect", "inspect.getclosurevars(self.W_q.forward) and q"),
    "module-of-a-function": ("import inspect", "inspect.getmodule(self.W_q.forward) and q"),
    "walk-stack": ("import traceback", "list(traceback.walk_stack(None)) and q"),
    "extract-stack": ("from traceback import extract_stack", "extract_stack() and q"),
}


@pytest.mark.parametrize("imports, call", list(REVIEWED.values()), ids=list(REVIEWED))
def test_dynamic_reaches_are_flagged_for_review_and_cost_nothing(imports, call):
    result = check(**{MHA: mha(call, imports)})
    assert result.uses == [], result.uses
    assert result.review and all(f.file == f"{MHA}.py" for f in result.review)
    assert all(f.sentence.startswith(f"assignments/t101/{MHA}.py line ") for f in result.review)


NORMAL = {
    "own-attribute": "getattr(self, 'W_q')(query)",
    "own-attribute-by-name": "getattr(self, self.name)(query)",
    "own-layer-f-string": "getattr(self, f'W_{\"q\"}')(query)",
    "setattr-own": "setattr(self, 'cache', q) or q",
    "has-flash": "q if hasattr(torch.nn.functional, 'scaled_dot_product_attention') else q",
    "own-sdpa": "__import__('math') and q",
    "has-globals": "q if hasattr(self.W_q.forward, '__globals__') else q",
}


@pytest.mark.parametrize("call", list(NORMAL.values()), ids=list(NORMAL))
def test_what_a_normal_learner_writes_is_not_flagged(call):
    result = check(**{MHA: mha(call)})
    assert result.findings == [], result.findings


def test_a_library_implementation_only_run_as_a_script_is_flagged_for_review():
    script = mha("q") + '\nif __name__ == "__main__":\n    print(nn.MultiheadAttention(4, 2))\n'
    result = check(**{MHA: script})
    assert result.uses == [] and len(result.review) == 1
    assert "runs only as a script" in result.review[0].sentence
    rebinding = '__name__ = "__main__"\n' + script  # then importing the module runs it
    assert set(charged(check(**{MHA: rebinding}))) == {MHA}


# Which components pay ---------------------------------------------------------------------
