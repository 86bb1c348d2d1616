"""What the worker's confinement allows, probed from learner code in one live session."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import textwrap
from pathlib import Path

import pytest

from autograder.runtime import LearnerSession, Limits
from autograder.runtime.harness import isolation
from autograder.runtime.harness.worker_launch import write_framework

PROBE = """
import os, socket


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read(200).decode(errors="replace")
    except OSError as exc:
        return type(exc).__name__


def write(path):
    try:
        with open(path, "w") as f:
            f.write("x")
        return "written"
    except OSError as exc:
        return type(exc).__name__


def umount(path):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.umount2(path.encode(), 2) == 0


def capabilities():
    for line in open("/proc/self/status"):
        if line.startswith("CapEff:"):
            return int(line.split()[1], 16)


def processes():
    return sorted(int(p) for p in os.listdir("/proc") if p.isdigit())


def connect():
    try:
        socket.create_connection(("1.1.1.1", 53), timeout=2).close()
        return "connected"
    except OSError as exc:
        return type(exc).__name__
"""


@pytest.fixture(scope="module")
def secret_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("course")
    (folder / "solutions").mkdir()
    (folder / "solutions" / "reference.py").write_text("ANSWER = 42\n")
    return folder


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory, secret_dir: Path):
    package = tmp_path_factory.mktemp("submission") / "probe"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "tools.py").write_text(textwrap.dedent(PROBE))
    session = LearnerSession(package, package="probe", limits=Limits(), hide_paths=[secret_dir])
    tools = session.module("tools")
    tools.read("/dev/null")  # start the worker
    yield session, tools, package
    session.close()


def needs(level: str) -> None:
    if isolation.probe()[0] != level:
        pytest.skip(f"this machine gives the worker {isolation.probe()[0]}, not {level}")


def test_hide_targets_covers_whole_folders_and_descends_only_towards_kept_paths(tmp_path):
    for name in ("a/keep/inner", "a/other", "b"):
        (tmp_path / name).mkdir(parents=True)
    (tmp_path / "a" / "file.txt").write_text("x")
    targets = isolation.hide_targets([tmp_path / "a", tmp_path / "b"], [tmp_path / "a" / "keep"])
    assert sorted(targets) == sorted(str(tmp_path / p) for p in ("a/file.txt", "a/other", "b"))


def test_system_folders_are_never_hidden_whole(tmp_path):
    assert isolation.hide_targets([Path("/"), Path("/tmp"), Path("/usr")], [tmp_path]) == []


def test_the_session_reports_its_isolation_level(probe):
    session, _, _ = probe
    assert session.isolation["level"] == isolation.probe()[0]


def test_hidden_folders_cannot_be_read(probe, secret_dir):
    needs(isolation.NAMESPACES)
    session, tools, package = probe
    # Not on the allow-list, so not there at all (tests/hostile/test_file_system_reach.py)
    assert tools.read(str(secret_dir / "solutions" / "reference.py")) == "FileNotFoundError"
    assert tools.read(str(package / "tools.py")) == "FileNotFoundError"  # the submission
    assert session.isolation["root"] == "allow-list"


def test_the_disk_is_read_only_except_the_private_copy(probe):
    needs(isolation.NAMESPACES)
    session, tools, _ = probe
    assert tools.write("/usr/autograder-hostile-probe") == "OSError"  # EROFS
    assert tools.write("autograder-probe.txt") == "written"  # its private folder
    assert session.isolation["writable_mounts"] == []


def test_the_worker_has_no_capabilities_and_cannot_unmount_its_root(probe, secret_dir):
    needs(isolation.NAMESPACES)
    _, tools, _ = probe
    assert tools.capabilities() == 0
    assert tools.umount("/usr") is False and tools.umount("/") is False
    assert tools.read(str(secret_dir / "solutions" / "reference.py")) == "FileNotFoundError"


def test_the_worker_sees_only_its_own_processes_and_no_network(probe):
    needs(isolation.NAMESPACES)
    _, tools, _ = probe
    assert tools.processes()[0] == 1 and len(tools.processes()) < 5
    assert tools.connect() == "OSError"


def test_shared_memory_is_private_to_the_worker(probe):
    # /dev is not remounted read-only: without a private tmpfs on /dev/shm one learner's worker
    # could leave files (multiprocessing.shared_memory) there for the next learner's.
    needs(isolation.NAMESPACES)
    session, tools, _ = probe
    name = f"/dev/shm/autograder-probe-{os.getpid()}"
    assert tools.write(name) == "written"
    assert not os.path.exists(name)
    assert session.isolation["private_shm"] is True


NOBODY_UNSHARE = (
    "unshare",
    "--user",
    "--map-root-user",
    "--pid",
    "--fork",
    "--kill-child",
    "--mount",
    "--mount-proc",
    "--net",
)


@pytest.fixture
def nobody_folder():
    """A folder `nobody` may read (not tmp_path: pytest's base folder is closed to nobody),
    holding secret/reference.py, base/ (nobody's) and framework/ (the worker side of the
    runtime). Tests using it run the system Python as `nobody` (the suite's own Python may live
    where nobody cannot read it)."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None or not os.access(PYTHON, os.X_OK):
        pytest.skip("needs root, setpriv and a system Python to become nobody")
    folder = Path(tempfile.mkdtemp())
    try:
        (folder / "secret").mkdir()
        (folder / "secret" / "reference.py").write_text("ANSWER = 42\n")
        (folder / "base").mkdir()
        write_framework(folder)
        for path in [folder, *folder.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        os.chown(folder / "base", isolation.NOBODY, isolation.NOBODY)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


PYTHON = "/usr/bin/python3"


def run_as_nobody(folder: Path, prefix: tuple[str, ...], probe: str, *args: str) -> dict:
    """Run ``probe`` with the system Python as `nobody` (after ``prefix``); its JSON output."""
    drop = [shutil.which("setpriv"), "--reuid=65534", "--regid=65534", "--clear-groups"]
    done = subprocess.run(
        [*drop, *prefix, PYTHON, "-c", probe, str(folder), *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=folder,
    )
    if done.returncode != 0 and "unshare" in done.stderr:
        pytest.skip(f"no unprivileged user namespaces here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


USERNS_PROBE = """
import ctypes, json, os, sys
sys.path.insert(0, sys.argv[1] + "/framework")
from autograder.runtime.worker import confine as isolation
folder = sys.argv[1]
os.chdir(folder + "/base")
plan = {"level": isolation.USER_NAMESPACES, "hide": [folder + "/secret"],
        "writable": folder + "/base", "uid_ok": False}
out = {"report": isolation.confine(plan)}
try:
    out["read"] = open(folder + "/secret/reference.py").read()
except OSError as exc:
    out["read"] = type(exc).__name__
out["umount"] = ctypes.CDLL(None, use_errno=True).umount2((folder + "/secret").encode(), 2)
try:
    open(folder + "/outside.txt", "w").close()
    out["write_outside"] = "written"
except OSError as exc:
    out["write_outside"] = type(exc).__name__
open("inside.txt", "w").close()
print(json.dumps(out))
"""


def test_the_user_namespace_level_confines_an_unprivileged_worker(nobody_folder):
    """The fallback for a harness that is not root (the host's root with covers), as `nobody`."""
    folder = nobody_folder
    out = run_as_nobody(folder, NOBODY_UNSHARE, USERNS_PROBE)
    assert out["report"]["hidden"] == 1 and out["report"]["writable_mounts"] == []
    assert out["read"] == "PermissionError" and out["umount"] == -1
    assert out["write_outside"] == "OSError"  # read-only
    assert (folder / "base" / "inside.txt").exists()


FORKED_USERNS_PROBE = """
import json, os, sys
sys.path.insert(0, sys.argv[1] + "/framework")
from autograder.runtime.worker import confine as isolation
folder = sys.argv[1]
os.chdir(folder + "/base")
read, write = os.pipe()
if os.fork() == 0:  # the zygote's child: enter the namespaces, then confine as the worker does
    os.close(read)
    isolation.enter_namespaces(isolation.USER_NAMESPACES)
    plan = {"level": isolation.USER_NAMESPACES, "hide": [folder + "/secret"],
            "writable": folder + "/base", "uid_ok": False}
    out = {"pid": os.getpid(), "report": isolation.confine(plan)}
    out["processes"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
    try:
        out["read"] = open(folder + "/secret/reference.py").read()
    except OSError as exc:
        out["read"] = type(exc).__name__
    os.write(write, json.dumps(out).encode())
    os._exit(7)
os.close(write)
data = b""
while chunk := os.read(read, 65536):
    data += chunk
_, status = os.wait()
print(json.dumps({"child": json.loads(data), "status": os.waitstatus_to_exitcode(status)}))
"""


def test_the_forked_user_namespace_path_confines_an_unprivileged_worker(nobody_folder):
    """What the zygote's child does at the user-namespaces level (confine.enter_namespaces,
    then confine), run as `nobody` with the system Python: PID 1 of its own namespace, the
    secret covered, and its exit status passed on by the process that waited for it."""
    out = run_as_nobody(nobody_folder, (), FORKED_USERNS_PROBE)
    child = out["child"]
    assert child["pid"] == 1 and child["processes"] == [1]
    assert child["report"]["hidden"] == 1 and child["report"]["writable_mounts"] == []
    assert child["read"] == "PermissionError"
    assert out["status"] == 7


USERNS_ALLOW_LIST_PROBE = """
import errno, json, os, sys
sys.path.insert(0, sys.argv[1] + "/framework")
from autograder.runtime.worker import confine
folder = sys.argv[1]
plan = json.loads(sys.argv[2])
os.chdir(folder + "/base/root")
out = {"report": confine.confine(plan)}


def attempt(action):
    try:
        return action()
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno))


out["secret"] = attempt(lambda: open(folder + "/secret/reference.py").read())
out["passwd"] = attempt(lambda: open("/etc/passwd").read())
out["own"] = attempt(lambda: open("mine.py").read())
out["outside"] = attempt(lambda: open(folder + "/base/planted", "w").close())
big = b"x" * 2**20


def fill():
    with open("big.bin", "wb") as f:
        for _ in range(64):
            f.write(big)
    return "written"


out["fill"] = attempt(fill)
print(json.dumps(out))
"""


def test_the_allow_list_root_confines_an_unprivileged_worker(nobody_folder):
    """The root of its own, built as `nobody` in an unprivileged user namespace (the level of a
    CI runner that is not root), with the system Python: only the allow-list exists, the
    private root is writable up to its quota, the rest of its folder is read-only."""
    folder = nobody_folder
    (folder / "base" / "root").mkdir()
    (folder / "base" / "root" / "mine.py").write_text("MINE = 1\n")
    for path in (folder / "base").rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
        os.chown(path, isolation.NOBODY, isolation.NOBODY)
    allowed, links = isolation.allow_list(folder / "base")
    plan = {
        "level": isolation.USER_NAMESPACES,
        # the system Python under /usr: nobody may not enter this suite's own Python
        "allow": [a for a in allowed if a in (*isolation.SYSTEM_READ, *isolation.HOST_FILES_READ)]
        + [str(folder / "framework")],
        "links": links,
        "hide": [],
        "writable": str(folder / "base"),
        "disk_mb": 8,
        "uid_ok": False,
    }
    out = run_as_nobody(folder, NOBODY_UNSHARE, USERNS_ALLOW_LIST_PROBE, json.dumps(plan))
    assert out["report"]["root"] == "allow-list" and out["report"]["disk_mb"] == 8
    assert out["report"]["writable_mounts"] == []
    assert out["secret"] == out["passwd"] == "ENOENT"
    assert out["own"] == "MINE = 1\n"
    assert out["outside"] == "EROFS"
    assert out["fill"] == "ENOSPC"
    assert not (folder / "base" / "root" / "big.bin").exists()  # the quota is not the host's
