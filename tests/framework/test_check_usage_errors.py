"""`autograder check` when it cannot run: exit status 2 and one sentence that says why (an
unknown component, a bad catalogue, no references, a module the references lack, bad options)."""

from __future__ import annotations

import pytest

from autograder.commands import check
from autograder.config import load_course
from tests.framework.check_runs import TOY, copied_toy, run_main


@pytest.fixture(scope="module")
def toy():
    return load_course(TOY / "course.toml")


def test_unknown_component_exits_2(toy):
    code, output, errors = run_main(components=["scaling"])
    assert (code, output) == (2, "")
    assert errors == (
        f"--component scaling is not a component of {toy.path}; choose from: scale, normalize.\n"
    )


def test_bad_catalogue_exits_2(tmp_path):
    course = copied_toy(tmp_path)
    bad = course / "mistakes/scale.toml"
    bad.write_text(bad.read_text().replace('id = "adds-factor"', 'id = "Adds factor"'))
    code, output, errors = run_main(course=course / "course.toml")
    assert (code, output) == (2, "")
    assert errors.startswith(f"The catalogue file {bad} is not valid: mistakes.0.id: expected")


def test_course_without_references_exits_2(tmp_path):
    course = copied_toy(tmp_path)
    path = course / "course.toml"
    path.write_text(path.read_text().replace('reference_dir = "solution/toypkg"\n', ""))
    code, _, errors = run_main(course=path)
    assert code == 2
    assert errors == (
        f"The course file {path} names no reference_dir; autograder check grades the "
        "references, so it needs them.\n"
    )


def test_a_component_module_the_references_do_not_have_exits_2(tmp_path):
    """H43: module = "scalle" passed: the reference scored full marks, the stubs zero, and only
    every mutant failed, without naming the key."""
    course = copied_toy(tmp_path)
    path = course / "course.toml"
    path.write_text(path.read_text().replace('module = "scale"', 'module = "scalle"', 1))
    code, _, errors = run_main(course=path)
    assert code == 2
    assert errors == (
        f"{path}: module of component \"scale\" is 'scalle', but "
        f"{course / 'solution/toypkg'} has no "
        "scalle.py; expected the module's path inside the package, dotted (the references and "
        "the stubs must both have it).\n"
    )


@pytest.mark.parametrize(
    ("options", "sentence"),
    [
        ({"jobs": 0}, "--jobs must be a whole number of at least 1; got 0.\n"),
        (
            {"test_timeout": -1.0},
            "--timeout must be a positive number of seconds, at most 3,600; got -1.0.\n",
        ),
    ],
)
def test_bad_options_exit_2(options, sentence):
    assert run_main(**options) == (2, "", sentence)


def test_keep_folder_that_is_not_empty_exits_2(tmp_path):
    (tmp_path / "old.txt").write_text("old")
    code, _, errors = run_main(keep=tmp_path)
    assert code == 2
    assert errors == check.KEEP_NOT_EMPTY.format(path=tmp_path.resolve()) + "\n"


def test_cli_check_help_lists_the_options():
    from click.testing import CliRunner

    from autograder.cli import cli

    result = CliRunner().invoke(cli, ["check", "--help"])
    assert result.exit_code == 0
    for option in ("--course", "--jobs", "--component", "--keep", "--timeout"):
        assert option in result.output
