"""The trusted side's static check finds a forbidden API under any spelling a learner can write.

The learner here has read the framework: they know the runtime recorder wraps names, so they
reach the same kernels under other names (aten operators, C bindings, the module a class is
defined in), build the name at run time, unwrap the recorder, or hide the call in a cheaper
component's file. Each spelling must zero exactly the components whose code path it serves.
Real implementations (the references, every variant and mutant, the real-world corpus, the
example class) must not be flagged at all.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from autograder.config import load_course
from autograder.static_check import check_package, check_sources
from autograder.static_check.scan import TAMPER
from autograder.static_check.step_budget import STEPS, StepBudget

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
    init = textwrap.indent(textwrap.dedent(init), " " * 8) if init else ""
    return MHA_TEMPLATE.format(imports=imports, call=call, init=init)


def charged(result) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for use in result.uses:
        out.setdefault(use.component, set()).add(use.api)
    return out


F_ = "import torch.nn.functional as F"
SDPA = "scaled_dot_product_attention"
MATH = "_scaled_dot_product_attention_math"
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

HELPER_IN_SOFTMAX = (
    REFERENCE["softmax.py"].decode()
    + "\n\ndef {name}(q, k, v):\n    import torch\n"
    + "    return torch.ops.aten._scaled_dot_product_attention_math(q, k, v)[0]\n"
)


@pytest.mark.parametrize("name", ["_attend", "attend_all"])
def test_a_helper_in_a_cheaper_components_file_charges_the_caller_too(name):
    source = mha(f"{name}(q, k, v)", f"from .softmax import {name}")
    result = check(softmax=HELPER_IN_SOFTMAX.format(name=name), **{MHA: source})
    assert set(charged(result)) == {"softmax", MHA}
    caller = next(u for u in result.uses if u.component == MHA)
    assert caller.file == "softmax.py" and caller.sentence.endswith(", in code this part calls.")


SOFTMAX = REFERENCE["softmax.py"].decode()
KEPT = f"\nimport torch.nn.functional as _F\nattend_fast = _F.{SDPA}\n"
KEPT_ELSEWHERE = {
    "variable": (KEPT, {}, "from .softmax import attend_fast", "attend_fast(q, k, v)"),
    "class-attribute": (
        f"\nimport torch\n\nclass _Kit:\n    attend = torch.nn.functional.{SDPA}\n",
        {},
        "from .softmax import _Kit",
        "_Kit.attend(q, k, v)",
    ),
    "re-export": (
        KEPT,
        {"helpers": "from .softmax import attend_fast as attend\n"},
        "from .helpers import attend",
        "attend(q, k, v)",
    ),
    "star-of-a-component": (KEPT, {}, "from .softmax import *", "attend_fast(q, k, v)"),
    "star-of-a-helper": (
        KEPT,
        {"helpers": "from .softmax import *\n"},
        "from .helpers import attend_fast",
        "attend_fast(q, k, v)",
    ),
    "written-into-globals": (
        f'\nimport torch\nglobals()["attend_fast"] = torch.nn.functional.{SDPA}\n',
        {},
        "from .softmax import attend_fast",
        "attend_fast(q, k, v)",
    ),
}


@pytest.mark.parametrize(
    "kept, helpers, imports, call", list(KEPT_ELSEWHERE.values()), ids=list(KEPT_ELSEWHERE)
)
def test_a_name_kept_at_module_level_of_a_cheaper_component_charges_its_user(
    kept, helpers, imports, call
):
    """A module variable, a class attribute, an alias or a re-export of another component's
    file is no graded name: using it charges multi-head attention, and softmax that holds it."""
    result = check(softmax=SOFTMAX + kept, **helpers, **{MHA: mha(call, imports)})
    assert set(charged(result)) == {"softmax", MHA}, result.findings
    assert {u.api for u in result.uses} == {f"torch.nn.functional.{SDPA}"}


def test_a_module_imported_from_another_component_is_followed_to_the_api():
    source = mha(f"_F.{SDPA}(q, k, v)", "from .softmax import _F")
    result = check(softmax=SOFTMAX + "\nimport torch.nn.functional as _F\n", **{MHA: source})
    assert set(charged(result)) == {MHA}
    assert {(u.file, u.api) for u in result.uses} == {(f"{MHA}.py", f"torch.nn.functional.{SDPA}")}


def test_a_graded_name_of_another_component_charges_only_its_own_component():
    """softmax = a library function, imported by name by multi-head attention: the runtime's
    stand-in replaces it there, so softmax alone pays."""
    kept = SOFTMAX.replace("def softmax(", "def _own_softmax(") + f"\nsoftmax = {SDPA}\n"
    kept = f"from torch.nn.functional import {SDPA}\n" + kept
    source = mha("softmax(q)", "from .softmax import softmax")
    assert set(charged(check(softmax=kept, **{MHA: source}))) == {"softmax"}


def test_a_star_import_from_a_helper_module_is_followed_to_the_api():
    helper = "from torch.nn.functional import *  # noqa\n"
    source = mha("attend(q, k, v)", f"from .fun import {SDPA} as attend")
    result = check(fun=helper, **{MHA: source})
    assert set(charged(result)) == {MHA}
    assert {u.file for u in result.uses} == {f"{MHA}.py"}


def test_a_star_import_charges_only_the_forbidden_names_used():
    own = f"from torch.nn.functional import *\n\ndef {SDPA}(q, k, v):\n    return softmax(q)\n"
    source = mha(f"{SDPA}(q, k, v) + relu(q)", "from torch.nn.functional import *\n" + own)
    assert check(**{MHA: source}).findings == []


def test_a_forbidden_part_is_charged_once_not_again_to_what_builds_on_it():
    """The encoder builds on MultiHeadAttention (a graded name of another component): a use in
    it is multi-head attention's alone, as the runtime's stand-ins keep it (lena)."""
    result = check(**{MHA: mha("torch.nn.MultiheadAttention(4, 2)(q, k, v)[0]")})
    assert set(charged(result)) == {MHA}


def test_a_helper_module_charges_the_components_that_use_it():
    helper = "import torch\n\ndef attend(q):\n    return torch._native_multi_head_attention(q)\n"
    encoder = (
        REFERENCE["encoder.py"]
        .decode()
        .replace(
            "from .add_norm import AddNorm",
            "from .add_norm import AddNorm\nfrom .helpers import attend",
        )
        .replace("super().__init__()", "super().__init__()\n        attend(None)", 1)
    )
    assert set(charged(check(helpers=helper, encoder=encoder))) == {"encoder"}


def test_the_package_init_serves_every_component():
    init = "import torch.nn.functional as F\n_fast = F.scaled_dot_product_attention\n"
    assert set(charged(check(__init__=init))) == {c.name for c in COURSE.components}


def test_a_file_no_component_imports_is_flagged_for_review_only():
    scratch = "import torch\nreference = torch.nn.MultiheadAttention(8, 2)\n"
    result = check(scratch=scratch)
    assert result.uses == [] and [f.file for f in result.review] == ["scratch.py"]
    assert "in code no graded part calls" in result.review[0].sentence


# No false positives ---------------------------------------------------------------------


def test_the_references_the_stubs_and_the_example_class_are_not_flagged():
    packages = [ROOT / "solutions" / "t101", ROOT / "assignments" / "t101"]
    packages += sorted((ROOT / "examples" / "submissions").glob("*/assignments/t101"))
    for package in packages:
        result = check_package(COURSE, package)
        if package.parts[-3] == "lena":  # the class's forbidden example: exactly her call
            assert {(u.component, u.api) for u in result.uses} == {
                (MHA, "torch.nn.MultiheadAttention")
            }
            continue
        assert result.findings == [], (package, result.findings)


def test_every_variant_mutant_and_real_world_implementation_is_not_flagged(tmp_path):
    from autograder.mistakes.cases import plan_cases, write_case

    plan = plan_cases(COURSE)
    assert len(plan.cases) > 20
    for index, case in enumerate(plan.cases):
        package = write_case(plan, case, tmp_path / str(index))
        result = check_package(COURSE, package)
        assert result.findings == [], (case.label, result.findings)


def test_every_real_world_corpus_file_is_not_flagged():
    corpus = ROOT / "solutions" / "corpus"
    for folder in sorted(p for p in corpus.iterdir() if p.is_dir()):
        files = dict(REFERENCE)
        files.update({p.name: p.read_bytes() for p in folder.glob("*.py")})
        result = check_sources(COURSE, files)
        assert result.findings == [], (folder.name, result.findings)


def test_a_configurable_activation_is_only_flagged_for_review():
    """getattr(nn, name) is how some real code picks its activation: it may reach anything in
    torch.nn, so the instructor sees it, and the learner loses nothing."""
    ff = (
        REFERENCE["feed_forward.py"]
        .decode()
        .replace("torch.relu(self.W_1(x))", "getattr(torch, self.activation)(self.W_1(x))")
    )
    result = check(feed_forward=ff)
    assert result.uses == []
    assert [f.what for f in result.review] == ["getattr(torch, self.activation)"]


def test_code_nested_too_deeply_to_read_is_flagged_not_a_crash():
    chain = "torch" + ".nn" * 900  # Python parses it; a recursive reader cannot follow it
    result = check(helpers=f"import torch\n\nx = {chain}\n")
    assert result.uses == [] and result.unreadable == []
    assert [(f.file, f.what) for f in result.review] == [
        ("helpers.py", "code nested too deeply to read")
    ]


def chain(n: int, first: str = "torch") -> str:
    """Helpers where f_i returns f_{i-1}() or f_{i-2}(): 2**(n/1.4) return paths, n functions."""
    helpers = [f"def f0():\n    return {first}\n", f"def f1():\n    return {first}\n"]
    helpers += [f"def f{i}():\n    return f{i - 1}() or f{i - 2}()\n" for i in range(2, n)]
    return "import torch\n\n" + "\n\n".join(helpers)


def test_a_long_chain_of_helpers_is_followed_once_each_within_the_step_budget():
    source = (
        REFERENCE["softmax.py"].decode() + "\n\n" + chain(40) + "\n\ndef g():\n    return f39()\n"
    )
    result = check(softmax=source)
    assert result.uses == [] and result.review == [] and result.evidence == ""
    assert 1_000 < result.steps < 5_000  # unremembered it took 2**28 steps and hours
    assert result.steps < STEPS


def test_a_forbidden_api_at_the_end_of_a_long_chain_of_helpers_is_found():
    source = mha(f"f39().{SDPA}(q, k, v)") + "\n\n" + chain(40, "torch.nn.functional") + "\n"
    result = check(**{MHA: source})
    assert set(charged(result)) == {MHA}
    assert {u.api for u in result.uses} == {f"torch.nn.functional.{SDPA}"}


def test_a_forbidden_api_returned_around_a_cycle_of_helpers_is_found_from_either_side():
    helpers = "def f():\n    return g() or torch.nn.functional\n\ndef g():\n    return f()\n"
    for first, then in (("f", "g"), ("g", "f")):  # g, followed inside f, first stops at f
        source = mha(f"{first}() and {then}().{SDPA}(q, k, v)") + "\n\n" + helpers
        result = check(**{MHA: source})
        assert set(charged(result)) == {MHA}, first
        assert f"torch.nn.functional.{SDPA}" in {f.what for f in result.findings}, first


def test_a_check_out_of_steps_stops_and_flags_the_learner_for_review_with_the_file():
    source = REFERENCE["softmax.py"].decode() + "\n\n" + chain(40)
    result = check_sources(COURSE, {"softmax.py": source.encode()}, StepBudget(limit=500))
    assert result.uses == [] and result.evidence == "" and result.steps == 501
    assert [(f.file, f.line, f.what) for f in result.review] == [
        ("softmax.py", 1, "code too costly to follow")
    ]
    assert result.review[0].sentence == (
        "assignments/t101/softmax.py: the check for forbidden APIs stopped in this file: "
        "following how the package's functions call and return one another took more than "
        "500 steps, so this file and those after it were not fully checked; read them yourself."
    )
