"""grade-class keeps each learner's graded package source in DIR/<learner>/source for
`autograder similarity`, without following a symbolic link out of the submission."""

from __future__ import annotations

import os
import shutil

from autograder.copies import sources

from .conftest import TOY, grade_class_main


def test_the_graded_package_is_kept_and_links_are_not_followed(tmp_path) -> None:
    roster, out = tmp_path / "roster", tmp_path / "out"
    secret = tmp_path / "secret.py"
    secret.write_text("PASSWORD = 'not for the gradebook'\n")
    package = roster / "amara" / "toypkg"
    shutil.copytree(TOY / "solution" / "toypkg", package)
    os.symlink(secret, package / "stolen.py")  # a plain folder may hold any link
    outside = tmp_path / "elsewhere" / "toypkg"
    shutil.copytree(TOY / "solution" / "toypkg", outside)
    (roster / "ben").mkdir()
    os.symlink(outside, roster / "ben" / "toypkg")  # the package folder itself: a link out
    assert grade_class_main(roster, out) in (0, 1)
    kept = sorted(p.name for p in (out / "amara" / sources.SOURCE_DIR).iterdir())
    assert kept == sorted(
        p.name for p in package.iterdir() if p.suffix == ".py" and not p.is_symlink()
    )
    assert "stolen.py" not in kept
    assert sources.read(out / "amara", "scale.py") == (package / "scale.py").read_text()
    assert not sources.has_source(out / "ben")
