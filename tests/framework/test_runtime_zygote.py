"""Workers forked by the zygote: the same answers and the same confinement as fresh ones."""

from __future__ import annotations

import os
import random
import socket
import textwrap
import time
from pathlib import Path

import pytest

from autograder.runtime import LearnerError, LearnerSession, Limits
from autograder.runtime.harness import isolation, zygote_client
from autograder.runtime.worker import zygote as zygote_module
from tests.processes import python_output, running_with

pytestmark = pytest.mark.skipif(not zygote_client.supported(), reason="fork servers need Linux")

PROBE = """
import os, random, socket, subprocess


def double(x):
    return 2 * x


def environment():
    return dict(os.environ)


def descriptors():
    kinds = []
    for fd in sorted(os.listdir("/proc/self/fd"), key=int):
        try:
            kinds.append(os.readlink(f"/proc/self/fd/{fd}").split(":")[0])
        except OSError:
            pass
    return kinds


def connect(path):
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(path)
        return "connected"
    except OSError as exc:
        return type(exc).__name__


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as exc:
        return type(exc).__name__


def processes():
    return sorted(int(p) for p in os.listdir("/proc") if p.isdigit())


def threads():
    return len(os.listdir("/proc/self/task"))


def draw():
    return random.random()


def cpus():
    return sorted(os.sched_getaffinity(0))


def leave_behind(marker):
    subprocess.Popen(["sh", "-c", f"setsid sleep {marker} &"], start_new_session=True)
    return True


def exit_with(code):
    os._exit(code)


def segfault():
    import ctypes
    ctypes.string_at(0)


def hang():
    while True:
        pass
"""


@pytest.fixture(scope="module")
def zygote():
    with zygote_client.serving() as started:
        if started is None:
            pytest.skip("a zygote already serves this process")
        yield started


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pkg = tmp_path_factory.mktemp("submission") / "probe"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "tools.py").write_text(textwrap.dedent(PROBE))
    return pkg


@pytest.fixture(scope="module")
def secret_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("course")
    (folder / "reference.py").write_text("ANSWER = 42\n")
    return folder


def open_session(package: Path, secret_dir: Path, **limits: float) -> LearnerSession:
    return LearnerSession(
        package, package="probe", limits=Limits(**limits), hide_paths=[secret_dir]
    )


@pytest.fixture
def session(zygote, package: Path, secret_dir: Path):
    with open_session(package, secret_dir) as opened:
        yield opened


def test_the_worker_is_a_fork_of_the_zygote_and_answers_calls(session):
    assert session.module("tools").double(21) == 42
    assert session.worker_start == "zygote"


def test_the_zygote_runs_one_thread_and_is_not_in_the_workers_namespaces(zygote, session):
    assert len(os.listdir(f"/proc/{zygote.process.pid}/task")) == 1
    assert session.module("tools").threads() == 1


def test_the_environment_is_the_allow_list_for_this_learner(session, monkeypatch):
    monkeypatch.setenv("T101_CANARY", "canary-value")  # set in the harness after the zygote
    env = session.module("tools").environment()
    root = session._channel.worker.root
    assert env["HOME"] == env["TMPDIR"] == str(root)
    assert "T101_CANARY" not in env and zygote_client.ENV not in env
    assert set(env) <= {
        *("PATH", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "LANG", "LC_ALL", "HOME"),
        *("TMPDIR", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED"),
        *("PYTHONNOUSERSITE", "OMP_NUM_THREADS", "MKL_NUM_THREADS"),
    }


def test_the_worker_holds_no_descriptor_of_the_zygote(session):
    kinds = session.module("tools").descriptors()
    # stdin, the capture file twice, the channel; the listener and the other workers' lines
    # to the zygote are closed (the listing's own descriptor may appear as a folder path)
    assert kinds.count("socket") == 1
    assert len(kinds) <= 5


def test_the_zygote_control_folder_is_out_of_reach(zygote, session):
    assert session.module("tools").connect(zygote.address) != "connected"


def test_confinement_is_the_same_as_a_fresh_workers(zygote, package, secret_dir, monkeypatch):
    with open_session(package, secret_dir) as forked:
        forked.module("tools").double(1)
        via_zygote = dict(forked.isolation)
    monkeypatch.delenv(zygote_client.ENV)
    with open_session(package, secret_dir) as fresh:
        fresh.module("tools").double(1)
        assert fresh.worker_start == "fresh"
        assert via_zygote["level"] == fresh.isolation["level"]
        assert via_zygote["uid"] == fresh.isolation["uid"]
        assert via_zygote["writable_mounts"] == fresh.isolation["writable_mounts"] == []
        if via_zygote["level"] != isolation.PROCESS_GROUP:
            assert via_zygote["root"] == fresh.isolation["root"] == "allow-list"
            assert via_zygote["disk_mb"] == fresh.isolation["disk_mb"] == Limits().disk_mb
            assert via_zygote["hidden"] == fresh.isolation["hidden"]
            # the zygote's copy of the runtime is one more folder to read (a fresh worker's
            # lies in its private folder); its control folder does not exist for the worker
            assert via_zygote["allowed"] == fresh.isolation["allowed"] + 1


def test_the_worker_has_its_own_processes_no_network_and_no_hidden_files(session, secret_dir):
    if isolation.probe()[0] == isolation.PROCESS_GROUP:
        pytest.skip("this machine gives the worker no namespaces")
    tools = session.module("tools")
    assert tools.processes()[0] == 1 and len(tools.processes()) < 5
    assert tools.read(str(secret_dir / "reference.py")) in ("PermissionError", "FileNotFoundError")


def test_every_learner_gets_its_own_random_state(zygote, package, secret_dir):
    draws = []
    for _ in range(2):
        with open_session(package, secret_dir) as opened:
            draws.append(opened.module("tools").draw())
    assert draws[0] != draws[1]


@pytest.mark.parametrize(
    ("call", "expected"),
    [("exit_with", "ended with exit status 3 before"), ("segfault", "killed by SIGSEGV")],
)
def test_a_crash_reports_the_exit_status_like_a_fresh_worker(zygote, session, call, expected):
    tools = session.module("tools")
    args = (3,) if call == "exit_with" else ()
    with pytest.raises(LearnerError) as info:
        getattr(tools, call)(*args)
    assert info.value.kind == "crash" and expected in info.value.feedback
    assert tools.double(2) == 4 and session.worker_start == "zygote"  # a new fork


def test_a_time_out_kills_the_worker_and_the_next_call_forks_another(zygote, package, secret_dir):
    with open_session(package, secret_dir, test_timeout=1.0) as opened:
        tools = opened.module("tools")
        opened.begin_test("hang")
        with pytest.raises(LearnerError) as info:
            tools.hang()
        opened.end_test()
        assert info.value.kind == "timeout"
        opened.begin_test("after")
        assert tools.double(5) == 10 and opened.generation == 2
        opened.end_test()


@pytest.mark.parametrize("start", ["zygote", "fresh"])
def test_the_worker_runs_on_the_cpus_of_its_harness(
    zygote, package, secret_dir, monkeypatch, start
):
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) < 2:
        pytest.skip("one CPU: there is no other to stay off")
    if start == "fresh":
        monkeypatch.delenv(zygote_client.ENV)
    os.sched_setaffinity(0, {allowed[-1]})
    try:
        with open_session(package, secret_dir) as opened:
            assert opened.module("tools").cpus() == [allowed[-1]]
            assert opened.worker_start == start
    finally:
        os.sched_setaffinity(0, allowed)
    with open_session(package, secret_dir) as opened:  # the zygote itself was left as it was
        assert opened.module("tools").cpus() == allowed


def test_closing_the_session_leaves_no_process_behind(zygote, package, secret_dir):
    if isolation.probe()[0] == isolation.PROCESS_GROUP:
        pytest.skip("without a PID namespace a detached process can survive (SECURITY.md)")
    marker = f"{900 + random.randrange(99)}.{random.randrange(10**6):06d}"
    with open_session(package, secret_dir) as opened:
        assert opened.module("tools").leave_behind(marker)
    deadline = time.monotonic() + 5
    while _processes_mentioning(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_mentioning(marker) == []


def test_hanging_up_on_the_zygote_kills_the_worker(zygote, tmp_path):
    parent_end, child_end = socket.socketpair()
    capture = tmp_path / "capture.log"
    with child_end, capture.open("ab") as file:
        forked = zygote_client.spawn(
            zygote.address,
            root=tmp_path,
            env={"PATH": os.defpath},
            memory_mb=4096,
            file_mb=64,
            plan={"level": isolation.PROCESS_GROUP},
            channel=child_end.fileno(),
            capture=file.fileno(),
            timeout=60,
        )
    forked.close()
    parent_end.settimeout(10)
    assert parent_end.recv(1) == b""  # the worker's end closed: it is dead
    parent_end.close()


def test_without_an_answering_zygote_the_worker_starts_fresh(package, secret_dir, monkeypatch):
    monkeypatch.setenv(zygote_client.ENV, str(secret_dir / "no-such.sock"))
    with open_session(package, secret_dir) as opened:
        assert opened.module("tools").double(4) == 8
        assert opened.worker_start == "fresh"


def _processes_mentioning(marker: str) -> list[str]:
    return list(running_with(marker).values())


WORKER_START_IMPORTS = """
import random, sys
from autograder.runtime.worker import zygote
zygote._warm_up()
before = set(sys.modules)
random.seed()
import numpy
numpy.random.seed()
from autograder.runtime.shared import affinity
from autograder.runtime.worker import confine, serve
print(sorted(set(sys.modules) - before))
"""


def test_a_forked_worker_imports_nothing_the_zygote_could_have_imported():
    """What a worker imports before it serves is imported once, by the zygote, not in every
    worker (numpy.random, which numpy loads lazily, cost 17 ms of each worker's start)."""
    assert python_output(WORKER_START_IMPORTS) == "[]"


def test_a_zygote_still_importing_is_stopped_at_once(zygote):
    """A command that ends before its zygote has imported torch (a bad argument, nothing left
    to grade) does not wait STOP_GRACE for it: it has forked no worker yet."""
    ready = zygote.folder / zygote_module.CONTROL_DIR / zygote_module.READY_FILE
    deadline = time.monotonic() + 60
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert ready.exists()  # a zygote that finished its imports says so
    fresh = zygote_client.start()
    start = time.monotonic()
    fresh.stop()
    assert time.monotonic() - start < zygote_client.STOP_GRACE / 2
    assert fresh.process.returncode is not None and not fresh.folder.exists()
