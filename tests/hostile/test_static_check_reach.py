"""The static check follows a forbidden API across files: helpers in a cheaper component's file,
names kept at module level, star imports, helper modules, long chains and cycles of helpers,
within a step budget; real implementations are never flagged.
"""

from __future__ import annotations

import pytest

from autograder.static_check import check_package, check_sources
from autograder.static_check.step_budget import STEPS, StepBudget
from tests.hostile.static_check_sources import (
    COURSE,
    MHA,
    REFERENCE,
    ROOT,
    SDPA,
    charged,
    check,
    mha,
)

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
