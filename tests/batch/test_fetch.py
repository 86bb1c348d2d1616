"""grade-class on a roster of clone URLs (gradebook/fetch.py), against a real git server.

A `git daemon` on 127.0.0.1 serves a bare copy of the toy class's `good` repository (commits
on both sides of the deadline) over git://, as GitHub would over https://: the learner's copy
is cloned into DIR/.repos, graded at the deadline commit, updated by a rerun, kept (and graded)
when the server cannot be reached, and not fetched at all for a learner already graded. A URL
the server does not have, a closed port and a scheme git must not use each give that learner a
row with the reason, and the run goes on."""

from __future__ import annotations

import json
import socket

import pytest

from autograder import results
from autograder.gradebook import (
    changed_settings,
    fetch,
    git_network,
    report,
    report_model,
    roster,
    store,
    url_secrets,
)
from tests.batch.conftest import (
    AFTER,
    DEADLINE,
    commit_all,
    git,
    grade_class_main,
    needs_git_daemon,
    read_gradebook,
    url_roster,
)

pytestmark = needs_git_daemon


def test_clone_urls_are_fetched_and_graded_and_failures_are_rows(git_server, toy_class, tmp_path):
    url, _ = git_server
    roster_csv = url_roster(
        tmp_path,
        {
            "good": f"{url}/good.git",
            "nobody": f"{url}/nobody.git",
            "closed": "git://127.0.0.1:1/closed.git",  # nothing listens on port 1
            "ftp": "ftp://example.org/t101.git",
        },
    )
    out = tmp_path / "out"
    assert grade_class_main(roster_csv, out, deadline=DEADLINE) == 1
    rows = {row["learner"]: row for row in read_gradebook(out / "gradebook.csv")}
    assert list(rows) == ["closed", "ftp", "good", "nobody"]
    good = rows["good"]
    assert (good["commit"], good["late"], good["total"]) == (
        toy_class["good_on_time"],
        "yes",
        "15.00",
    )
    assert (out / ".repos" / "good.git" / "HEAD").is_file()  # a bare copy, kept for reruns
    assert list((out / ".repos" / ".partial").iterdir()) == []
    assert rows["nobody"]["errors"].startswith(f"git could not clone {url}/nobody.git: ")
    assert rows["closed"]["errors"].startswith("git could not clone git://127.0.0.1:1/closed.git")
    assert rows["ftp"]["errors"] == roster.UNSUPPORTED_URL.format(
        url="ftp://example.org/t101.git", scheme="ftp"
    )
    assert not (out / ".repos" / "nobody.git").exists()


def test_a_resumed_run_fetches_only_the_learners_left(git_server, tmp_path, monkeypatch):
    url, _ = git_server
    roster_csv = url_roster(tmp_path, {"good": f"{url}/good.git", "nobody": f"{url}/nobody.git"})
    out = tmp_path / "out"
    assert grade_class_main(roster_csv, out) == 1
    before = store.read_record(out, "good")
    fetched: list[list[str]] = []
    real_run = git_network.Commands.run

    def run(commands, args, env, timeout):
        fetched.append(args)
        return real_run(commands, args, env, timeout)

    monkeypatch.setattr(git_network.Commands, "run", run)
    assert grade_class_main(roster_csv, out) == 1
    assert store.read_record(out, "good").run_id == before.run_id  # kept, not regraded
    assert [args[-2] for args in fetched] == [f"{url}/nobody.git"]  # tried again: it failed


def test_a_rerun_fetches_new_commits_and_grades_them(git_server, toy_class, tmp_path):
    url, served = git_server
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(served / "good.git"), str(work))
    roster_csv = url_roster(tmp_path, {"good": f"{url}/good.git"})
    out = tmp_path / "out"
    assert grade_class_main(roster_csv, out) == 0
    first = read_gradebook(out / "gradebook.csv")[0]
    assert first["commit"] == toy_class["good_broken"]  # HEAD, no deadline
    git(work, "checkout", "-q", toy_class["good_on_time"], "--", "toypkg")
    fixed = commit_all(work, "fixed again", AFTER)
    git(work, "push", "-q", "origin", "HEAD:main")
    try:
        assert grade_class_main(roster_csv, out, force=True) == 0
        row = read_gradebook(out / "gradebook.csv")[0]
        assert (row["commit"], row["total"]) == (fixed, "15.00")
    finally:  # the served repository as the other tests expect it
        git(work, "push", "-q", "--force", "origin", f"{toy_class['good_broken']}:main")


@pytest.mark.parametrize("quiet", [False, True])  # -q keeps problems: this is one
def test_a_copy_that_cannot_be_updated_is_graded_as_fetched_before(
    git_server, toy_class, tmp_path, capsys, quiet
):
    url, served = git_server
    roster_csv = url_roster(tmp_path, {"good": f"{url}/good.git"})
    out = tmp_path / "out"
    assert grade_class_main(roster_csv, out, deadline=DEADLINE) == 0
    hidden = served / "moved.git"
    (served / "good.git").rename(hidden)  # the server no longer has it
    try:
        assert grade_class_main(roster_csv, out, deadline=DEADLINE, force=True, quiet=quiet) == 0
    finally:
        hidden.rename(served / "good.git")
    row = read_gradebook(out / "gradebook.csv")[0]
    assert (row["commit"], row["total"]) == (toy_class["good_on_time"], "15.00")
    err = " ".join(capsys.readouterr().err.split())  # rich wraps long lines
    assert f"Could not update the copy of {url}/good.git for good (" in err
    assert f"grading the copy fetched before (its HEAD is {toy_class['good_broken']})." in err
    # ...and the gradebook keeps it: the record says why, the class report says who
    assert store.read_record(out, "good").note.startswith("Could not update the copy of ")
    said = report_model.STALE_COPIES.format(learners="good")
    assert said in " ".join((out / report.MARKDOWN_FILE).read_text().split())
    # ...and so do the learner's own reports (H34: only record.json and the class report did)
    assert results.STALE_COPY in (out / "good" / "summary.md").read_text()
    graded = json.loads((out / "good" / "results.json").read_text())["extra_data"]
    assert graded["graded_commit"]["stale"] is True
    # The server is back: a plain rerun tries that learner again (H33: it kept the stale row).
    assert grade_class_main(roster_csv, out, deadline=DEADLINE) == 0
    assert store.read_record(out, "good").note == ""
    assert results.STALE_COPY not in (out / "good" / "summary.md").read_text()


@pytest.mark.parametrize(
    ("repo", "clone"),
    [
        ("https://github.com/cy/t101.git", True),
        ("HTTP://example.org/t101", True),
        ("ssh://git@github.com/cy/t101.git", True),
        ("git://127.0.0.1:9418/t101.git", True),
        ("git@github.com:cy/t101.git", True),
        ("ext::sh -c touch% /tmp/pwned", False),
        ("fd::3", False),
        ("file:///srv/t101", False),
        ("repos/amy", False),
        ("C:\\repos\\amy", False),
        ("-u touch /tmp/x", False),
        ("me@host://x", False),
    ],
)
def test_which_repositories_are_clone_urls(repo: str, clone: bool) -> None:
    assert roster.is_clone_url(repo) is clone


@pytest.mark.parametrize(
    ("url", "text", "expected"),
    [
        ("https://ghp_SECRET@github.com/cy/t101.git", None, "https://***@github.com/cy/t101.git"),
        (
            "https://cy:ghp_SECRET@github.com/cy/t101.git",
            "fatal: Authentication failed for 'https://cy:ghp_SECRET@github.com/cy/t101.git/'",
            "fatal: Authentication failed for 'https://***@github.com/cy/t101.git/'",
        ),
        ("ssh://git@github.com/cy/t101.git", None, "ssh://git@github.com/cy/t101.git"),
        ("git@github.com:cy/t101.git", "remote: \x1b[31mno\x1b[0m", "remote: [31mno[0m"),
        ("https://h.org/t.git?access_token=QTOKEN", None, "https://h.org/t.git?***"),
        ("https://h.org/t.git#access_token=QTOKEN", None, "https://h.org/t.git#***"),
        ("https://h.org/repo1.git?1", None, "https://h.org/repo1.git?***"),  # not repo***
        ("https://u:p@h.org/app.git", None, "https://***@h.org/app.git"),  # not a***
        ("https://t@[::1/t.git", "fatal: bad https://t@[::1/t.git", "fatal: bad the URL"),
        (  # a lone user part may be a token: hidden in the URL, not in the path after it
            "https://t101-alice@github.com/t101-alice/t101.git",
            None,
            "https://***@github.com/t101-alice/t101.git",
        ),
        (
            "ssh://cy:hunter2@example.org/t101.git",
            "ssh://cy:hunter2@example.org/t101.git: hunter2 refused",
            "ssh://cy:***@example.org/t101.git: *** refused",
        ),
        (  # H35: git quotes the user part without an empty password's colon...
            "http://ghp_TOKEN:@127.0.0.1:8770/ben.git",
            "fatal: could not read Password for 'http://ghp_TOKEN@127.0.0.1:8770': no prompts",
            "fatal: could not read Password for 'http://***@127.0.0.1:8770': no prompts",
        ),
        (  # ...and percent-decoded
            "http://ghp%5FTOKEN:pa%73s99@h.org/x.git",
            "fatal: Authentication failed for 'http://ghp_TOKEN:pass99@h.org/x.git/'; pass99",
            "fatal: Authentication failed for 'http://***@h.org/x.git/'; ***",
        ),
    ],
)
def test_urls_are_shown_without_tokens_or_control_characters(url, text, expected) -> None:
    assert url_secrets.shown(url, text) == expected


def test_a_token_in_a_clone_url_never_reaches_the_gradebook(tmp_path) -> None:
    token_url = "https://ghp_SECRET@127.0.0.1:1/t101.git"  # nothing listens: refused at once
    out = tmp_path / "out"
    learners = fetch.locate([roster.Learner("cy", None, url=token_url)], out)
    [learner] = fetch.fetch(learners, out, say=lambda line: None)
    assert learner.repo is None
    assert learner.error.startswith("git could not clone https://***@127.0.0.1:1/t101.git: ")
    assert "SECRET" not in learner.error


def test_a_server_that_never_answers_fails_the_clone_at_the_time_out(tmp_path, monkeypatch):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()  # accepts connections (the kernel does) and never says a word
    port = listener.getsockname()[1]
    monkeypatch.setattr(fetch, "FETCH_TIMEOUT", 1.0)
    try:
        url = f"git://127.0.0.1:{port}/silent.git"
        out = tmp_path / "out"
        learners = fetch.locate([roster.Learner("sil", None, url=url)], out)
        [learner] = fetch.fetch(learners, out, say=lambda line: None)
    finally:
        listener.close()
    assert (learner.repo, learner.error) == (None, f"git took longer than 1 s to clone {url}.")
    assert list((out / ".repos" / ".partial").iterdir()) == []


def test_a_learner_whose_url_changed_is_graded_again(git_server, tmp_path, capsys):
    url, _ = git_server
    out = tmp_path / "out"
    assert grade_class_main(url_roster(tmp_path, {"good": f"{url}/good.git"}), out) == 0
    changed = url_roster(tmp_path, {"good": f"{url}/nobody.git"})
    capsys.readouterr()
    assert grade_class_main(changed, out, quiet=False) == 1
    said = " ".join(capsys.readouterr().err.split())
    assert (
        changed_settings.OTHER_REPOSITORY.format(learners="1 learner has", out=out.resolve())
        in said
    )
    assert store.read_record(out, "good").error.startswith(f"git could not clone {url}/nobody")


_HINT = "\nPlease make sure you have the correct access rights\nand the repository exists.\n"


@pytest.mark.parametrize(
    ("stderr", "expected"),
    [
        (  # ssh: the reason is the line before git's own fatal line, not the hint after it
            "Cloning into bare repository 'x'...\n"
            "ssh: connect to host example.org port 22: Connection refused\n"
            "fatal: Could not read from remote repository.\n" + _HINT,
            "ssh: connect to host example.org port 22: Connection refused",
        ),
        (
            "git@github.com: Permission denied (publickey).\r\n"
            "fatal: Could not read from remote repository.\n" + _HINT,
            "git@github.com: Permission denied (publickey)",
        ),
        (
            "remote: Repository not found.\n"
            "fatal: repository 'https://github.com/cy/t101.git/' not found\n",
            "fatal: repository 'https://github.com/cy/t101.git/' not found",
        ),
        (
            "fatal: Could not read from remote repository.\n" + _HINT,
            "fatal: Could not read from remote repository",
        ),
        (
            "fatal: unable to connect to 127.0.0.1:\n127.0.0.1[0: 127.0.0.1]: errno=Connection "
            "refused\n",
            "fatal: unable to connect to 127.0.0.1: 127.0.0.1[0: 127.0.0.1]: errno=Connection "
            "refused",
        ),
        ("", "git exited with status 128"),
    ],
)
def test_the_line_that_says_why_git_failed_is_kept(stderr: str, expected: str) -> None:
    assert git_network.cause(stderr, 128) == expected


@pytest.mark.parametrize(
    ("url", "options"),
    [
        ("https://ghp_SECRET@github.com/cy/t101.git", ["-c", "credential.helper="]),
        ("http://cy:pw@127.0.0.1/t101.git", ["-c", "credential.helper="]),
        ("https://github.com/cy/t101.git", []),  # the user's helper may hold the credentials
        ("git@github.com:cy/t101.git", []),
    ],
)
def test_no_credential_helper_sees_a_url_that_carries_a_token(url, options) -> None:
    """A helper such as `store` would write the token to disk."""
    assert fetch._no_helper(url) == options


def test_the_users_own_ssh_command_and_stall_limit_are_kept(monkeypatch) -> None:
    for name in (
        "GIT_SSH_COMMAND",
        "GIT_SSH",
        "GIT_HTTP_LOW_SPEED_LIMIT",
        "GIT_HTTP_LOW_SPEED_TIME",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "0")
    env = git_network.network_env()
    assert env["GIT_SSH_COMMAND"] == git_network.SSH_COMMAND
    assert env["GIT_HTTP_LOW_SPEED_TIME"] == "60"
    monkeypatch.setenv("GIT_CONFIG_COUNT", "2")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.sshCommand")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "ssh -i ~/.ssh/classroom")
    monkeypatch.setenv("GIT_CONFIG_KEY_1", "http.lowSpeedLimit")
    monkeypatch.setenv("GIT_CONFIG_VALUE_1", "10")
    env = git_network.network_env()
    assert "GIT_SSH_COMMAND" not in env and "GIT_HTTP_LOW_SPEED_TIME" not in env
