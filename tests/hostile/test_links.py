"""A submission is read without following a link out of it, in every path the harness reads.

The hostile learner here has read the framework's code: a package folder that is a link to the
references, a link to another learner's folder, a link at a folder above the package, a file
linked to a secret, pipes and devices that would block a reader, and a link swapped in between
the check and the copy. Nothing outside the submission may be copied, hashed or graded as theirs.
"""

from __future__ import annotations

import os
import shutil
import stat
import threading
from pathlib import Path

import pytest

from autograder import learner_files
from autograder.config import SubmissionLink, load_course
from autograder.grading.package_dir import find_package, grader_package
from autograder.results import Ungraded
from autograder.runtime.harness import private_copy as copies
from tests.batch.conftest import TOY, grade_class_main

ROOT = Path(__file__).resolve().parents[2]
REFERENCES = ROOT / "solutions" / "t101"
CORRECT = ROOT / "examples" / "submissions" / "amara"
SECRET = "the answer key"


@pytest.fixture(scope="module")
def course():
    return load_course(ROOT / "course.toml")


def submission(tmp_path: Path, name: str = "kofi") -> Path:
    """A copy of a correct example submission, as a learner's own folder."""
    folder = tmp_path / name
    shutil.copytree(CORRECT, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


@pytest.mark.parametrize("absolute", [True, False], ids=["absolute", "relative"])
def test_a_package_folder_linked_to_the_references_is_refused_naming_the_link(
    tmp_path, course, absolute
):
    kofi = submission(tmp_path)
    package = kofi / "assignments" / "t101"
    shutil.rmtree(package)
    target = REFERENCES if absolute else Path(os.path.relpath(REFERENCES, package.parent))
    package.symlink_to(target)
    with pytest.raises(SubmissionLink) as refused:
        course.package_dir_for(kofi)
    said = str(refused.value)
    assert said.startswith("assignments/t101 is a symbolic link (to ")
    assert str(target) in said and "never follows a link" in said
    outcome = grader_package(course, kofi, "kofi")
    assert isinstance(outcome, Ungraded) and outcome.reason == said


def test_a_link_at_a_folder_above_the_package_is_refused(tmp_path, course):
    kofi, ama = submission(tmp_path, "kofi"), submission(tmp_path, "ama")
    shutil.rmtree(kofi / "assignments")
    (kofi / "assignments").symlink_to("../ama/assignments")
    with pytest.raises(SubmissionLink, match=r"^assignments is a symbolic link \(to \.\./ama/"):
        course.package_dir_for(kofi)
    assert course.package_dir_for(ama) == ama.resolve() / "assignments" / "t101"


def test_no_other_package_is_looked_for_when_the_expected_one_is_a_link(tmp_path, course):
    """A real t101/ elsewhere in the repository is graded only when assignments/t101 is absent;
    a link there is the learner's answer, refused, not a reason to look further."""
    kofi = submission(tmp_path)
    shutil.copytree(kofi / "assignments" / "t101", kofi / "src" / "t101")
    shutil.rmtree(kofi / "assignments" / "t101")
    (kofi / "assignments" / "t101").symlink_to(REFERENCES)
    assert isinstance(grader_package(course, kofi, "kofi"), Ungraded)


def test_the_search_for_a_package_elsewhere_follows_no_link(tmp_path):
    kofi = tmp_path / "kofi"
    (kofi / "code").mkdir(parents=True)
    (kofi / "code" / "t101").symlink_to(REFERENCES)  # would be found by a glob
    (kofi / "lib").symlink_to(REFERENCES.parent)  # lib/t101 through a linked folder
    assert find_package(kofi, "t101") is None
    (kofi / "mine" / "t101").mkdir(parents=True)
    (kofi / "mine" / "t101" / "__init__.py").write_text("")
    assert find_package(kofi, "t101") == kofi.resolve() / "mine" / "t101"


def private_copy(package: Path) -> copies.PrivateCopy:
    return copies.copy_package(package, "t101")


def copied(copy: copies.PrivateCopy) -> dict[str, bytes]:
    root = copy.root / "t101"
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


@pytest.fixture
def package(tmp_path: Path) -> Path:
    return submission(tmp_path).resolve() / "assignments" / "t101"


def test_links_inside_the_package_leaving_it_are_left_out_with_why(package, tmp_path):
    secret = tmp_path / "secret.py"
    secret.write_text(f"KEY = {SECRET!r}\n")
    (package / "absolute.py").symlink_to(secret)
    (package / "relative.py").symlink_to("../../../secret.py")
    (package / "attention.py").unlink()
    (package / "attention.py").symlink_to(REFERENCES / "attention.py")
    (package / "to_a_folder").symlink_to(".")
    (package / "dangling.py").symlink_to("nowhere.py")
    copy = private_copy(package)
    try:
        assert copy.refused == {
            "absolute.py": learner_files.LINK_OUTSIDE,
            "attention.py": learner_files.LINK_OUTSIDE,
            "dangling.py": learner_files.LINK_BROKEN,
            "relative.py": learner_files.LINK_OUTSIDE,
            "to_a_folder": learner_files.LINK_TO_FOLDER,
        }
        files = copied(copy)
        assert "attention.py" not in files
        assert not any(SECRET.encode() in data for data in files.values())
    finally:
        shutil.rmtree(copy.base)


def test_a_link_to_one_of_the_packages_own_files_is_copied_as_that_file(package):
    """Decision: a link that stays inside the package names the learner's own bytes, so it is
    copied as a regular file (relative or absolute); a link to a link is left out."""
    (package / "softmax_again.py").symlink_to("softmax.py")
    (package / "sub").mkdir()
    (package / "sub" / "up.py").symlink_to("../softmax.py")
    (package / "absolute.py").symlink_to(package / "softmax.py")
    (package / "chain.py").symlink_to("softmax_again.py")
    copy = private_copy(package)
    try:
        files = copied(copy)
        own = (package / "softmax.py").read_bytes()
        assert files["softmax_again.py"] == files["sub/up.py"] == files["absolute.py"] == own
        assert copy.refused == {"chain.py": learner_files.LINK_TO_LINK}
    finally:
        shutil.rmtree(copy.base)


def test_pipes_sockets_and_devices_are_left_out_without_being_opened(package):
    os.mkfifo(package / "fifo.py")  # opening it for reading would block the harness forever
    made = [learner_files.NOT_REGULAR]
    try:
        os.mknod(package / "null.py", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
        made.append(learner_files.NOT_REGULAR)
    except PermissionError:
        pass  # not root: no device node to try
    copy = private_copy(package)
    try:
        assert copy.refused["fifo.py"] == learner_files.NOT_REGULAR
        assert len(copy.refused) == len(made)
        assert "fifo.py" not in copied(copy)
    finally:
        shutil.rmtree(copy.base)


def test_a_hard_link_is_copied_as_the_regular_file_it_is(package):
    """Decision: a hard link cannot be told from the file (both names are the file); only who
    can already read the target on the grading machine can make one, and a commit has none."""
    os.link(package / "softmax.py", package / "twin.py")
    copy = private_copy(package)
    try:
        assert copied(copy)["twin.py"] == (package / "softmax.py").read_bytes()
    finally:
        shutil.rmtree(copy.base)


def test_a_package_folder_swapped_for_a_link_after_the_check_is_not_copied(tmp_path, course):
    kofi = submission(tmp_path)
    package_dir = course.package_dir_for(kofi)  # checked: a real folder
    shutil.rmtree(package_dir)
    package_dir.symlink_to(REFERENCES)  # then swapped, before the worker's copy
    with pytest.raises(learner_files.LinkRefused):
        copies.copy_package(package_dir, "t101")


def test_a_file_swapped_for_a_link_while_copying_never_brings_the_secret_in(package, tmp_path):
    """Check-then-copy would copy the secret whenever the swap fell between the two; every
    file is opened with O_NOFOLLOW, so whichever the copy meets it never reads through a link."""
    secret = tmp_path / "secret.py"
    secret.write_text(f"KEY = {SECRET!r}\n")
    victim, staged = package / "softmax.py", package / ".staged"
    mine = victim.read_bytes()
    stop = threading.Event()

    def swap() -> None:
        while not stop.is_set():
            staged.unlink(missing_ok=True)
            staged.symlink_to(secret)
            os.replace(staged, victim)  # now a link
            staged.write_bytes(mine)
            os.replace(staged, victim)  # now the file again

    swapper = threading.Thread(target=swap)
    swapper.start()
    try:
        for _ in range(200):
            copy = private_copy(package)
            try:
                files = copied(copy)
                assert not any(SECRET.encode() in data for data in files.values())
                assert files.get("softmax.py", mine) == mine
            finally:
                shutil.rmtree(copy.base)
    finally:
        stop.set()
        swapper.join()


def test_folders_nested_too_deep_are_left_out_not_a_crash(package):
    deep = package
    for _ in range(learner_files.MAX_DEPTH + 3):
        deep = deep / "d"
    deep.mkdir(parents=True)
    copy = private_copy(package)
    try:
        assert list(copy.refused.values()) == [learner_files.TOO_DEEP]
    finally:
        shutil.rmtree(copy.base)


def test_a_link_name_with_a_line_break_is_shown_on_one_line(tmp_path, course):
    kofi = submission(tmp_path)
    shutil.rmtree(kofi / "assignments" / "t101")
    (kofi / "assignments" / "t101").symlink_to("x\n::error::forged\x1b[2J")
    with pytest.raises(SubmissionLink) as refused:
        course.package_dir_for(kofi)
    assert "\n" not in str(refused.value) and "\x1b" not in str(refused.value)
    assert "(to x\\n::error::forged\\x1b[2J)" in str(refused.value)


def test_a_protected_file_replaced_by_a_link_is_reported_and_not_read(tmp_path):
    from autograder.release.manifest import LINK, REPLACED_BY_LINK, compare_manifest, sha256

    kofi = tmp_path / "kofi"
    (kofi / "tests").mkdir(parents=True)
    (kofi / "tests" / "test_a.py").symlink_to(REFERENCES / "softmax.py")
    manifest = tmp_path / "manifest.json"
    digest = sha256((REFERENCES / "softmax.py").read_bytes())  # what following it would give
    manifest.write_text(f'{{"format": 1, "protected": {{"tests/test_a.py": "{digest}"}}}}')
    [change] = compare_manifest(manifest, kofi)
    assert change.got == LINK
    assert change.sentence == REPLACED_BY_LINK.format(path="tests/test_a.py")


def test_a_notebook_linked_out_of_the_submission_is_not_graded(tmp_path, course):
    from autograder.notebook.course import find_notebook_assignments
    from autograder.notebook.submission import notebook_parts

    [assignment] = find_notebook_assignments(course.root)
    kofi = submission(tmp_path)
    notebook = kofi / assignment.learner_path
    notebook.parent.mkdir(parents=True, exist_ok=True)
    notebook.unlink(missing_ok=True)
    notebook.symlink_to(assignment.source_notebook)
    [part] = notebook_parts(course, kofi, tmp_path / "out")
    tests = part.tests
    assert part.component == assignment.component
    assert tests and all(not t.passed for t in tests)
    assert all(t.message.startswith(f"{assignment.learner_path} is a symbolic link") for t in tests)


def test_a_plain_folder_roster_never_grades_another_learners_folder(tmp_path):
    """kofi's package is a link to ama's: kofi's row refuses it and names it; ama is graded."""
    roster, out = tmp_path / "roster", tmp_path / "out"
    ama = roster / "ama"
    shutil.copytree(TOY / "solution" / "toypkg", ama / "toypkg")
    (roster / "kofi").mkdir()
    (roster / "kofi" / "toypkg").symlink_to("../ama/toypkg")
    assert grade_class_main(roster, out) == 1
    from autograder.gradebook import store

    kofi = store.read_record(out, "kofi")
    assert "toypkg is a symbolic link (to ../ama/toypkg)" in kofi.error
    assert store.read_record(out, "ama").error == ""
