"""git commands that talk to a server (clone, fetch, ls-remote), none outliving its command.

* Each git runs in a process group of its own, stopped whole at its time-out or when the
  command is interrupted (``Commands.stop``); a reaper process kills any still running when
  the command ends, even by ``kill -9``.
* ``network_env``: the user's own git configuration, but never a prompt, only the https, http,
  ssh and git transports, and a limit for a server that stops sending.
* ``cause``: the line of git's messages that says why it failed.

Design (the mechanics and their sources): docs/internals/gradebook.md#git-against-a-server.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from functools import lru_cache, partial

_PR_SET_PDEATHSIG = 1
_REMOTE_UNREADABLE = "fatal: could not read from remote repository"
_HINTS = ("please make sure you have the correct access rights", "and the repository exists")
_PROGRESS = ("cloning into ", "warning: you appear to have cloned an empty repository")


@dataclass(frozen=True)
class Outcome:
    """How one git command ended: its status (None when it was stopped: its time-out, or
    the command interrupted), what it printed, and its messages."""

    status: int | None
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.status == 0


class Commands:
    """The git commands a fetch started, so that an interrupt stops all of them at once;
    ``close`` when done (it ends the reaper). Thread-safe: each worker thread runs its own git
    through ``run``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen] = set()
        self._stopped = False
        self._reaper: subprocess.Popen | None = None

    def close(self) -> None:
        """Stop every git still running, and the reaper."""
        self.stop()
        with self._lock:
            reaper, self._reaper = self._reaper, None
        if reaper is not None:
            try:
                reaper.stdin.close()  # it kills the groups still listed (none) and ends
            except OSError:
                pass
            reaper.wait()

    def run(self, args: list[str], env: dict[str, str], timeout: float) -> Outcome:
        """Run ``git ARGS`` with no input; stopped (status None) after ``timeout`` seconds or
        by ``stop``. OSError when git cannot be started."""
        with self._lock:
            if self._stopped:
                return Outcome(None, "", "")
            listing = self._reaper_input()
            process = subprocess.Popen(
                ["git", *args],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                errors="replace",
                process_group=0,
                preexec_fn=partial(_before_exec, os.getpid(), listing),
            )
            self._running.add(process)
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(process)
            stdout, stderr = process.communicate()
            return Outcome(None, stdout, stderr)
        finally:
            with self._lock:
                self._running.discard(process)
                self._tell_reaper(f"- {process.pid}")
        status = None if self._stopped else process.returncode
        return Outcome(status, stdout, stderr)

    def stop(self) -> None:
        """Kill every git still running (and its helpers); start no more."""
        with self._lock:
            self._stopped = True
            running = list(self._running)
        for process in running:
            _kill(process)

    @property
    def stopped(self) -> bool:
        """Whether ``stop`` was called."""
        return self._stopped

    def _reaper_input(self) -> int | None:
        """Under the lock: the descriptor of the reaper's input, the reaper started if need
        be. The reaper is a small process that kills the process groups listed on its input
        when this process ends, even by kill -9 (its input then ends): git's helpers
        (git-remote-https, ssh) are not git's children for the parent-death signal, only
        members of its group. A git lists its own group there before it runs (_before_exec):
        listed by this process after Popen returned, a git (and its helper) started just
        before a kill -9 was never listed, and its helper lived on."""
        if os.name != "posix":
            return None
        if self._reaper is None:
            self._reaper = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _REAPER],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                text=True,
                start_new_session=True,  # a Ctrl-C at the terminal is not for it
            )
        return self._reaper.stdin.fileno()

    def _tell_reaper(self, line: str) -> None:
        """Under the lock: unlist (-) a process group with the reaper."""
        if self._reaper is None:
            return
        try:
            self._reaper.stdin.write(line + "\n")
            self._reaper.stdin.flush()
        except OSError:  # it died: the parent-death signal still covers git itself
            pass


#: The reaper's program: the groups listed on its input, killed when the input ends.
_REAPER = """
import os, signal, sys
groups = set()
for line in sys.stdin:
    verb, _, group = line.partition(" ")
    (groups.add if verb == "+" else groups.discard)(int(group))
for group in groups:
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
"""


def cause(stderr: str, status: int | None = None) -> str:
    """The line of git's messages that says why it failed (without a final period)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    lines = [line for line in lines if not line.lower().startswith(_PROGRESS)]
    lines = [line for line in lines if not line.lower().startswith(_HINTS)]
    for index, line in enumerate(lines):
        if line.lower().startswith(_REMOTE_UNREADABLE):
            return (lines[index - 1] if index else line).rstrip(".")
    fatal = [i for i, line in enumerate(lines) if line.lower().startswith(("fatal:", "error:"))]
    if fatal:
        line = lines[fatal[0]]
        if line.endswith(":") and fatal[0] + 1 < len(lines):  # its reason on the next line
            line = f"{line} {lines[fatal[0] + 1]}"
        return line.rstrip(".")
    if lines:
        return lines[-1].rstrip(".")
    return f"git exited with status {status}"


def _kill(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)  # its group: the helpers too
    except (ProcessLookupError, PermissionError):
        pass  # already gone (its group with it)


_libc = ctypes.CDLL(None, use_errno=True) if sys.platform == "linux" else None


def _before_exec(parent: int, listing: int | None) -> None:
    """In git's process before exec (its own process group already): list the group with the
    reaper (on ``listing``, its input), then SIGKILL when the thread that started it dies."""
    if listing is not None:
        try:
            os.write(listing, f"+ {os.getpid()}\n".encode())
        except OSError:  # the reaper died: the parent-death signal still covers git itself
            pass
    if _libc is None:
        return
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the prctl: nobody would kill us
        os._exit(1)


#: The transports a roster's URL may use (GIT_ALLOW_PROTOCOL): never ``ext::``, which runs a
#: command, nor file:// (a roster names local repositories by path).
ALLOWED_PROTOCOLS = "https:http:ssh:git"


def network_env() -> dict[str, str]:
    """The user's environment for git against a server: no prompts, only the network
    transports (ALLOWED_PROTOCOLS), ssh in batch mode and stall limits unless the user set
    their own."""
    return dict(_network_env(tuple(sorted(os.environ.items()))))


#: ssh as grade-class runs it unless the user gave their own: never a prompt, and a server
#: that stops answering (after the banner, say) is left after a minute.
SSH_COMMAND = (
    "ssh -o BatchMode=yes -o ConnectTimeout=60 -o ServerAliveInterval=15 -o ServerAliveCountMax=4"
)


@lru_cache(maxsize=4)
def _network_env(environ: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    env = dict(environ)
    env.update(
        GIT_TERMINAL_PROMPT="0",
        GIT_ALLOW_PROTOCOL=ALLOWED_PROTOCOLS,
        GCM_INTERACTIVE="never",  # Git Credential Manager: fail rather than open a dialog
    )
    # The user's own ssh command (core.sshCommand, GIT_SSH) and stall limits (http.lowSpeed*)
    # win: an environment variable set here would override their configuration.
    if not ({"GIT_SSH_COMMAND", "GIT_SSH"} & env.keys() or _configured(env, "core.sshCommand")):
        env["GIT_SSH_COMMAND"] = SSH_COMMAND
    if not _configured(env, "http.lowSpeedLimit"):  # a stalled server fails after a minute
        env.setdefault("GIT_HTTP_LOW_SPEED_LIMIT", "1000")  # bytes a second, over...
        env.setdefault("GIT_HTTP_LOW_SPEED_TIME", "60")  # ...this many seconds
    return tuple(sorted(env.items()))


def _configured(env: dict[str, str], key: str) -> bool:
    """Whether the user's git configuration sets key."""
    done = subprocess.run(
        ["git", "config", "--get", key],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        cwd="/",  # outside any repository: the user's and the system's configuration only
        check=False,
    )
    return done.returncode == 0 and bool(done.stdout.strip())
