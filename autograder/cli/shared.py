"""Options and warm fork servers that several commands share.

What several commands share: their common options (one definition each, so that names,
types and units agree) and the warm fork servers a grading command starts first."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click


def course_option(help_text: str):
    return click.option("--course", type=click.Path(dir_okay=False, path_type=Path), help=help_text)


def timeout_option(whose: str = "learner code"):
    return click.option(
        "--timeout",
        "test_timeout",
        type=float,
        metavar="S",
        help=f"CPU seconds of {whose} allowed per test, at most three times as many in wall "
        "time (default: test_timeout in course.toml).",
    )


def jobs_option(what: str):
    return click.option(
        "--jobs", "-j", type=int, metavar="N", help=f"{what} at once (default: one per core)."
    )


def quiet_option(help_text: str):
    return click.option("--quiet", "-q", is_flag=True, help=help_text)


def component_option(help_text: str):
    return click.option("--component", "components", multiple=True, metavar="NAME", help=help_text)


def out_folder_option(help_text: str, *, required: bool = True):
    return click.option(
        "--out", required=required, type=click.Path(file_okay=False, path_type=Path), help=help_text
    )


def seed_option(help_text: str):
    return click.option(
        "--seed", type=int, default=0, show_default=True, metavar="N", help=help_text
    )


def pass_rule_option(help_text: str):
    return click.option("--pass-rule", metavar="RULE", help=help_text)


def manifest_option(help_text: str):
    return click.option(
        "--manifest", type=click.Path(dir_okay=False, path_type=Path), help=help_text
    )


@contextmanager
def warm_workers(*, batch: bool = False) -> Iterator[None]:
    """A fork server for this command's untrusted workers (runtime/harness/zygote_client.py),
    started before the command imports torch, so that the two imports overlap. ``batch``: then the
    fork server of the batch's session process (batch/fork_server.py), which every learner of
    a batch waits for, before this command's own imports and argument checks; after the zygote,
    whose address it must inherit."""
    from autograder.runtime.harness import zygote_client

    with zygote_client.serving():
        if batch:
            from autograder.batch import fork_server

            fork_server.start()
        yield
