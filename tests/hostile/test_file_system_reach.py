"""What of the grading machine's disk learner code can reach: only an allow-list of it.

A determined learner searches the machine for the course: another checkout (references, hidden
tests) in the host's /tmp, in /home or beside the submission, another batch's compiled hidden
graders, another learner's private copy, host files such as /etc/passwd; or writes outside its
own copy. Under namespaces none of those paths exists for the worker (worker/new_root.py);
without namespaces the session says so and these tests skip.
"""

from __future__ import annotations

import os
import shutil
import textwrap
from pathlib import Path

import pytest

from autograder.runtime import LearnerSession, Limits
from autograder.runtime.harness import isolation
from tests.hostile.test_isolation import PROBE

SEARCH = (
    PROBE
    + """

def listing(path):
    try:
        return sorted(os.listdir(path))
    except OSError as exc:
        return type(exc).__name__


def find(marker, skip=("/proc", "/sys")):
    '''Every path under / whose name holds ``marker``, as a search of the whole disk finds it.'''
    found = []
    for folder, folders, files in os.walk("/"):
        folders[:] = [f for f in folders if os.path.join(folder, f) not in skip]
        found += [os.path.join(folder, n) for n in folders + files if marker in n]
    return found


def home():
    return os.environ.get("HOME"), os.getcwd()
"""
)

MARKER = "T101-OTHER-CHECKOUT"


def plant_checkout(folder: Path) -> Path:
    """A copy of the course as an instructor might leave one: references, hidden tests, and
    the compiled hidden graders of a batch."""
    (folder / "solutions" / "t101").mkdir(parents=True)
    (folder / "solutions" / "t101" / "attention.py").write_text(f"# {MARKER} reference\n")
    (folder / f"{MARKER}.txt").write_text("a name a search of the disk would find\n")
    (folder / "tests" / "graders" / "hidden").mkdir(parents=True)
    hidden = folder / "tests" / "graders" / "hidden" / f"test_{MARKER}_hidden.py"
    hidden.write_text(f"# {MARKER} hidden test\n")
    (folder / ".pycache").mkdir()
    (folder / ".pycache" / f"test_{MARKER}.cpython-311.pyc").write_bytes(MARKER.encode())
    return folder


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory):
    """Checkouts in the host's /tmp (pytest's base folder lies there), in /home, beside the
    submission; the learner's own package; a second learner's live session."""
    if isolation.probe()[0] == isolation.PROCESS_GROUP:
        pytest.skip("this machine gives the worker no namespaces: it reads what the harness can")
    base = tmp_path_factory.mktemp("reach")
    in_tmp = plant_checkout(base / "other-checkout")
    home_dir = Path("/home") / f"t101-reach-{os.getpid()}"
    in_home = plant_checkout(home_dir) if os.access("/home", os.W_OK) else None
    package = base / "submission" / "assignments" / "probe"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "search.py").write_text(textwrap.dedent(SEARCH))
    beside = plant_checkout(base / "submission" / "course-copy")
    sessions = [
        LearnerSession(
            package, package="probe", limits=Limits(test_timeout=60, submission_timeout=900)
        )
        for _ in range(2)
    ]
    for session in sessions:
        session.module("search").home()  # both workers running
    try:
        yield {"tmp": in_tmp, "home": in_home, "beside": beside, "sessions": sessions}
    finally:
        for session in sessions:
            session.close()
        if in_home is not None:
            shutil.rmtree(in_home, ignore_errors=True)


def paths_of(checkout: Path) -> list[str]:
    return [
        str(checkout / "solutions" / "t101" / "attention.py"),
        str(checkout / "tests" / "graders" / "hidden" / f"test_{MARKER}_hidden.py"),
        str(next((checkout / ".pycache").iterdir())),
    ]


@pytest.mark.parametrize("where", ["tmp", "home", "beside"])
def test_another_checkout_does_not_exist_for_the_worker(planted, where):
    checkout = planted[where]
    if checkout is None:
        pytest.skip("/home is not writable here")
    search = planted["sessions"][0].module("search")
    for path in paths_of(checkout):
        assert os.path.exists(path)  # the harness sees it
        assert search.read(path) == "FileNotFoundError"
    assert search.listing(str(checkout)) == "FileNotFoundError"


def test_a_search_of_the_whole_disk_finds_no_checkout(planted):
    search = planted["sessions"][0].module("search")
    own_home, _ = search.home()
    assert search.write(f"{own_home}/{MARKER}-own.txt") == "written"
    assert search.find(MARKER) == [f"{own_home}/{MARKER}-own.txt"]  # the search does find


def test_host_files_outside_the_allow_list_do_not_exist(planted):
    search = planted["sessions"][0].module("search")
    for path in ("/etc/passwd", "/etc/shadow", "/etc/hostname", "/root/.bash_history"):
        assert search.read(path) == "FileNotFoundError", path
    assert search.listing("/etc") == sorted(
        os.path.basename(p)
        for p in isolation.HOST_FILES_READ
        if p.startswith("/etc/")
        if os.path.exists(p)
    )
    assert search.listing("/home") == "FileNotFoundError"
    assert search.read("/dev/null") == "" and search.listing("/dev/shm") == []


def test_another_learners_private_copy_does_not_exist(planted):
    first, second = (session.module("search") for session in planted["sessions"])
    other_home, _ = second.home()
    own_home, cwd = first.home()
    assert own_home == cwd and own_home != other_home
    assert first.listing(other_home) == "FileNotFoundError"
    assert first.read(f"{other_home}/probe/search.py") == "FileNotFoundError"
    tmp = Path(os.path.dirname(os.path.dirname(other_home)))
    # the host's /tmp holds only its own private folder, and the Python installation's folder
    # when that lies under /tmp (a checkout and its venv there: the worker must reach them)
    python = {
        path.relative_to(tmp).parts[0]
        for path in isolation.needed_paths(Path(own_home))
        if path.is_relative_to(tmp) and not path.is_relative_to(os.path.dirname(own_home))
    }
    assert sorted(first.listing(str(tmp))) == sorted(
        {os.path.basename(os.path.dirname(own_home)), *python}
    )


def test_learner_code_writes_nowhere_but_its_private_root(planted):
    session = planted["sessions"][0]
    search = session.module("search")
    own_home, _ = search.home()
    private = os.path.dirname(own_home)
    for path in ("/planted.txt", "/tmp/planted.txt", "/usr/planted.txt", f"{private}/x.txt"):
        assert search.write(path) in ("OSError", "PermissionError"), path  # read-only
    assert search.write(f"{own_home}/inside.txt") == "written"
    assert search.write("/dev/shm/inside") == "written"
    assert session.isolation["writable_mounts"] == []
    assert session.isolation["root"] == "allow-list"


def test_the_copy_of_the_package_is_read_only_to_learner_code(planted):
    """The source the static check read is the source that runs: learner code that rewrote a
    module before the harness imported it (or wrote one beside it) ran code no check read."""
    search = planted["sessions"][0].module("search")
    own_home, _ = search.home()
    for path in (f"{own_home}/probe/search.py", f"{own_home}/probe/_gen.py"):
        assert search.write(path) == "OSError", path  # a read-only file system
    assert search.write(f"{own_home}/_gen.py") == "written"  # its home is its own


def test_the_plan_allows_no_folder_of_the_course_or_the_harness(tmp_path):
    """The allow-list itself: the Python installation, system folders and a few host files,
    never the course (here the checkout holding the suite), home, cwd or the host's /tmp."""
    allowed, links = isolation.allow_list(tmp_path)
    course = Path(__file__).resolve().parents[2]
    python = isolation.needed_paths(tmp_path)
    for path in allowed:
        assert not Path(path).is_relative_to(tmp_path)
        assert path in (*isolation.SYSTEM_READ, *isolation.HOST_FILES_READ) or any(
            Path(path).is_relative_to(p) for p in python
        ), path
        assert not course.is_relative_to(path) or path == "/", path  # no folder above the course
    assert "/tmp" not in allowed and str(Path.home()) not in allowed
    assert set(links) <= set(isolation.SYSTEM_READ)


def test_grader_log_says_which_confinement_is_in_force():
    level = isolation.probe()[0]
    line = isolation.header_line(disk_mb=256)
    if level == isolation.PROCESS_GROUP:
        assert line == isolation.UNCONFINED_LINE.format(level=level)
        assert "it can read what the grader's user can read" in line
    else:
        assert line == (
            f"autograder: learner code runs confined ({level}): it sees only its own files and "
            "the Python installation, has no network and 256 MiB of disk"
        )
