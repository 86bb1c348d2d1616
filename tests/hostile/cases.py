"""The hostile cases of issue 3, grouped into grading runs (see corpus.py for the patch kinds)."""

from __future__ import annotations

from tests.hostile.attack_sources import (
    CLOBBER,
    DETACH,
    FORBIDDEN_ALIAS,
    FORBIDDEN_C,
    FORBIDDEN_DISGUISED,
    FORBIDDEN_GETATTR,
    FORBIDDEN_HELPER,
    FORBIDDEN_PRIVATE,
    HARVEST,
    HOSTILE_TEXT,
    PATCH_BUILTINS,
    PATCH_NUMPY,
    PATCH_PYTEST,
    PATCH_TORCH,
    STEAL_REFERENCE,
    SYNTAX_ERROR_FEED_FORWARD,
    example_source,
)
from tests.hostile.corpus import Case, Run

RUNS = (
    Run(
        "import_exits",
        (
            Case(
                "loop_at_import",
                "softmax",
                "append",
                "while True:\n    pass",
                phrase="Importing assignments/t101/softmax.py did not finish within 20 s",
                expect="zero",
            ),
            Case(
                "os_exit_at_import",
                "multi_head_attention",
                "append",
                "import os\nos._exit(7)",
                phrase="ended with exit status 7",
                expect="zero",
            ),
            Case(
                "sys_exit_at_import",
                "feed_forward",
                "append",
                "import sys\nsys.exit(0)",
                phrase="never end the program",
                expect="zero",
            ),
            Case(
                "keyboard_interrupt_at_import",
                "add_norm",
                "append",
                "raise KeyboardInterrupt",
                phrase="raised KeyboardInterrupt",
                expect="zero",
            ),
        ),
    ),
    Run(
        "import_sleeps_and_sources",
        (
            Case(
                "sleep_at_import",
                "softmax",
                "append",
                "import time\ntime.sleep(3600)",
                # 20 s of CPU time at most, 60 s in all: a sleep computes nothing
                phrase="Importing assignments/t101/softmax.py did not finish within 60 s, most "
                "of them spent waiting",
                expect="zero",
            ),
            Case(
                "system_exit_at_import",
                "multi_head_attention",
                "append",
                "raise SystemExit",
                phrase="raised SystemExit",
                expect="zero",
            ),
            Case(
                "syntax_error",
                "feed_forward",
                "source",
                SYNTAX_ERROR_FEED_FORWARD,
                phrase="assignments/t101/feed_forward.py has a syntax error at line 8",
                expect="zero",
            ),
            Case(
                "non_utf8_source",
                "add_norm",
                "source",
                example_source("add_norm") + b'\n_DESSERT = "cr\xe8me br\xfbl\xe9e"\n',
                phrase="assignments/t101/add_norm.py has a syntax error at line",
                expect="zero",
            ),
        ),
    ),
    Run(
        "call_exits",
        (
            Case(
                "os_exit_in_call",
                "feed_forward",
                "call",
                "import os\nos._exit(3)",
                phrase="ended with exit status 3",
            ),
            Case(
                "sys_exit_in_call",
                "add_norm",
                "call",
                "import sys\nsys.exit(1)",
                phrase="never end the program",
            ),
            Case(
                "keyboard_interrupt_in_call",
                "multi_head_attention",
                "call",
                "raise KeyboardInterrupt",
                phrase="raised KeyboardInterrupt",
            ),
        ),
        neighbours=("softmax",),
    ),
    Run(
        "call_hangs",
        (
            Case(
                "loop_in_call",
                "feed_forward",
                "call",
                "while True:\n    pass",
                phrase="did not finish within 2 s",
            ),
            Case(
                "sleep_in_call",
                "add_norm",
                "call",
                "import time\ntime.sleep(3600)",
                phrase="did not finish within 6 s, most of them spent waiting",
            ),
        ),
        neighbours=("softmax",),
    ),
    Run(
        "crashes",
        (
            Case(
                "segfault_in_call",
                "feed_forward",
                "call",
                "import ctypes\nctypes.string_at(0)",
                phrase="SIGSEGV",
            ),
            Case(
                "huge_allocation",
                "add_norm",
                "call",
                "import numpy\nnumpy.ones(1 << 42, dtype=numpy.uint8)",
                phrase="(the limit is 4096 MB)",
            ),
            Case(
                "missing_module",
                "multi_head_attention",
                "delete",
                phrase="Could not find assignments/t101/multi_head_attention.py in your",
                expect="zero",
            ),
        ),
        neighbours=("softmax",),
    ),
    Run(
        "floods_children_clobbering",
        (
            Case(
                "output_flood",
                "softmax",
                "append",
                "_own = softmax\n"
                "def softmax(x, axis=-1):\n"
                "    print('flood ' * 200000)\n"
                "    return _own(x, axis)",
                expect="full",
            ),
            Case("detached_children", "feed_forward", "append", DETACH, expect="full"),
            Case("clobber_reports", "add_norm", "append", CLOBBER, expect="full"),
        ),
        neighbours=("multi_head_attention",),
    ),
    Run(
        "monkeypatching",
        (
            Case("patch_numpy", "softmax", "append", PATCH_NUMPY),
            Case("patch_torch", "feed_forward", "append", PATCH_TORCH),
            Case("patch_pytest", "add_norm", "append", PATCH_PYTEST),
            Case("patch_builtins", "multi_head_attention", "append", PATCH_BUILTINS),
        ),
    ),
    Run(
        "pytest_outcomes",
        (
            Case(
                "pytest_skip",
                "softmax",
                "call",
                "import pytest\npytest.skip('not today')",
                phrase="raised Skipped",
            ),
            Case(
                "pytest_xfail",
                "feed_forward",
                "call",
                "import pytest\npytest.xfail('known')",
                phrase="raised XFailed",
            ),
            Case(
                "pytest_fail",
                "add_norm",
                "call",
                "import pytest\npytest.fail('graded elsewhere', pytrace=False)",
                phrase="raised Failed",
            ),
        ),
        neighbours=("multi_head_attention",),
    ),
    Run(
        "secrets_and_text",
        (
            Case("hostile_text", "softmax", "call", HOSTILE_TEXT, phrase="raised ValueError"),
            Case(
                "environment_canary", "feed_forward", "call", HARVEST, phrase="raised RuntimeError"
            ),
            Case(
                "steal_references",
                "add_norm",
                "append",
                STEAL_REFERENCE,
                phrase="no reference found: FileNotFoundError",  # not on the allow-list
            ),
        ),
        neighbours=("multi_head_attention",),
    ),
    Run(
        "forbidden_at_run_time",
        (
            Case(
                "forbidden_via_alias",
                "attention",
                "append",
                FORBIDDEN_ALIAS,
                phrase="torch.nn.functional.scaled_dot_product_attention",
                expect="zero",
            ),
            Case(
                "forbidden_via_getattr",
                "multi_head_attention",
                "append",
                FORBIDDEN_GETATTR,
                phrase="torch.nn.MultiheadAttention",
                expect="zero",
            ),
            Case(
                "forbidden_via_torch_c",
                "feed_forward",
                "append",
                FORBIDDEN_C,
                phrase="torch._C._nn.scaled_dot_product_attention",
                expect="zero",
            ),
        ),
        neighbours=("add_norm",),
    ),
    Run(
        "forbidden_from_no_component_file",
        (
            Case(
                "forbidden_under_a_library_file_name",
                "feed_forward",
                "append",
                FORBIDDEN_DISGUISED,
                phrase="torch.nn.MultiheadAttention",
                expect="zero",
            ),
            Case(
                "forbidden_in_a_helper_file",
                "add_norm",
                "append",
                FORBIDDEN_HELPER,
                phrase="torch.nn.MultiheadAttention",
                expect="zero",
            ),
            Case(
                "forbidden_private_kernel",
                "multi_head_attention",
                "append",
                FORBIDDEN_PRIVATE,
                phrase="torch._scaled_dot_product_attention_math",
                expect="zero",
            ),
        ),
        neighbours=("softmax",),
    ),
    Run(
        "encodings",
        (
            Case(
                "latin1_with_cookie",
                "softmax",
                "source",
                b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + example_source("softmax"),
                expect="full",
            ),
            Case(
                "utf8_bom",
                "multi_head_attention",
                "source",
                b"\xef\xbb\xbf" + example_source("multi_head_attention"),
                expect="full",
            ),
            Case(
                "crlf_lines",
                "add_norm",
                "source",
                example_source("add_norm").replace(b"\n", b"\r\n"),
                expect="full",
            ),
            Case(
                "utf16_source",
                "feed_forward",
                "source",
                example_source("feed_forward").decode().encode("utf-16"),
                phrase="assignments/t101/feed_forward.py has a syntax error at line 1",
                expect="zero",
            ),
        ),
    ),
)

RUNS += (Run("layout", (Case("package_at_repository_root", "softmax", "layout", expect="full"),)),)

CASES = {case.name: (run, case) for run in RUNS for case in run.cases}
