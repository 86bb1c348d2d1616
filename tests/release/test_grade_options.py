"""`autograder grade --github/--pass-rule/--manifest`: the sentences given before any grading."""

import json

from autograder.commands import grade as command
from autograder.github.actions_run import GITHUB_ONE
from autograder.results.pass_rule import BAD_RULE

from .conftest import ROOT


def _main(tmp_path, **options):
    settings = dict(
        submissions=[ROOT / "examples/submissions/amara"],
        out=tmp_path / "out",
        course=ROOT / "course.toml",
        visible_only=True,
        test_timeout=None,
        seed=0,
        quiet=True,
    )
    settings.update(options)
    return command.main(**settings)


def test_github_grades_one_submission_only(tmp_path, capsys):
    two = [ROOT / "examples/submissions/amara", ROOT / "examples/submissions/ben"]
    assert _main(tmp_path, submissions=two, github=True) == 2
    assert capsys.readouterr().err.strip() == GITHUB_ONE.format(count=2)
    assert not (tmp_path / "out").exists()


def test_a_bad_pass_rule_stops_before_grading(tmp_path, capsys):
    assert _main(tmp_path, github=True, pass_rule="some") == 2
    assert capsys.readouterr().err.strip() == BAD_RULE.format(value="some")


def test_an_unreadable_manifest_stops_before_grading(tmp_path, capsys):
    bad = tmp_path / "manifest.json"
    bad.write_text(json.dumps({"format": 1, "protected": {"../etc/passwd": "0"}}))
    assert _main(tmp_path, manifest=bad) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith(f"The manifest {bad} cannot be read: the entry '../etc/passwd'")
    assert _main(tmp_path, manifest=tmp_path / "missing.json") == 2
    assert "cannot be read" in capsys.readouterr().err
