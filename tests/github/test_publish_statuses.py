"""`autograder publish --statuses` against a recording server on 127.0.0.1."""

from __future__ import annotations

import json
import shutil

from autograder.commands import publish_statuses
from autograder.github.commit_status import NOT_GRADED
from autograder.github.published import PUBLISHED_FILE, read_published, unpublished
from autograder.gradebook import store

from .conftest import COURSE, SHA, TOKEN, env_for, write_record
from .recording_server import Answer

CONTEXT = "Transformers 101 / hidden tests"
RUN = "https://github.com/org/t101-instructor/actions/runs/4242"


def publish(graded, server, sleeps=None, **options):
    settings = dict(statuses=True, comment=False, dry_run=False)
    settings.update(options)
    env = settings.pop("env", None) or env_for(server)
    return publish_statuses.main(
        out=graded["out"],
        roster_path=graded["roster"],
        course=COURSE,
        env=env,
        sleep=(sleeps.append if sleeps is not None else None),
        clock=lambda: 1_000_000.0,
        **settings,
    )


def status_route(server, learner: str, *answers: Answer) -> str:
    path = f"/repos/org/t101-{learner}/statuses/{SHA[learner]}"
    server.answer("POST", path, *(answers or (Answer(201, {"id": 1}),)))
    return path


def test_one_status_per_graded_commit_with_state_description_and_run(graded, server, capsys):
    paths = {name: status_route(server, name) for name in ("amara", "ben", "chidi")}
    assert publish(graded, server) == 0
    sent = {r.path: r for r in server.made("POST")}
    assert set(sent) == set(paths.values())  # dara: no commit, no status
    assert sent[paths["amara"]].body == {
        "state": "success",
        "context": CONTEXT,
        "description": "100.00 / 100.00 points with the hidden tests: passed",
        "target_url": RUN,
    }
    assert sent[paths["ben"]].body["state"] == "failure"
    assert sent[paths["ben"]].body["description"] == (
        "0.00 / 100.00 points with the hidden tests: not passed yet (every test must pass)"
    )
    assert sent[paths["chidi"]].body["state"] == "error"
    assert sent[paths["chidi"]].body["description"] == NOT_GRADED
    request = sent[paths["amara"]]
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["accept"] == "application/vnd.github+json"
    assert request.headers["x-github-api-version"] == "2022-11-28"
    assert all(len(r.body["description"]) <= 140 for r in sent.values())
    out = capsys.readouterr().out
    assert "3 sent, 0 unchanged since sent, 0 failed, 1 without a commit." in out


def test_a_min_score_rule_says_what_is_needed(graded, server):
    path = status_route(server, "ben")
    for name in ("amara", "chidi"):
        status_route(server, name)
    assert publish(graded, server, pass_rule="min_score:70") == 0
    body = server.made("POST", path)[0].body
    assert body["description"].endswith("not passed yet (70 needed)")


def test_a_second_run_sends_only_the_learners_graded_again(graded, server, capsys):
    for name in ("amara", "ben", "chidi"):
        status_route(server, name)
    assert publish(graded, server) == 0
    assert read_published(graded["out"], "amara")["commit"] == SHA["amara"]
    assert unpublished(graded["out"]) == []
    capsys.readouterr()
    assert publish(graded, server) == 0
    assert len(server.made("POST")) == 3  # nothing new
    assert "0 sent, 3 unchanged since sent" in capsys.readouterr().out
    # ben graded again (grade-class replaces the folder): published.json is gone with it
    shutil.rmtree(store.learner_dir(graded["out"], "ben"))
    write_record(
        graded["out"], store.LearnerRecord("ben", commit=SHA["ben"], total=50.0, max_score=100.0)
    )
    assert unpublished(graded["out"]) == ["ben"]
    assert publish(graded, server) == 0
    assert [r.path for r in server.made("POST")][3:] == [
        "/repos/org/t101-ben/statuses/" + SHA["ben"]
    ]
    assert publish(graded, server, resend=True) == 0
    assert len(server.made("POST")) == 7


def test_a_primary_rate_limit_waits_until_the_reset_then_retries(graded, server):
    limited = Answer(
        403,
        {"message": "API rate limit exceeded for user ID 1."},
        {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(1_000_000 + 30)},
    )
    path = status_route(server, "amara", limited, Answer(201, {"id": 1}))
    for name in ("ben", "chidi"):
        status_route(server, name)
    sleeps: list[float] = []
    assert publish(graded, server, sleeps) == 0
    assert sleeps == [30.0]
    assert len(server.made("POST", path)) == 2


def test_a_secondary_rate_limit_honours_retry_after_and_then_backs_off(graded, server):
    secondary = Answer(403, {"message": "You have exceeded a secondary rate limit."})
    path = status_route(
        server,
        "amara",
        Answer(429, {"message": "slow down"}, {"retry-after": "7"}),
        secondary,
        secondary,
        Answer(201, {"id": 1}),
    )
    for name in ("ben", "chidi"):
        status_route(server, name)
    sleeps: list[float] = []
    assert publish(graded, server, sleeps) == 0
    assert sleeps == [7.0, 120.0, 240.0]  # a minute, doubled per try (the 2nd and 3rd tries)
    assert len(server.made("POST", path)) == 4


def test_a_rate_limit_longer_than_the_bound_fails_the_learner_for_now(graded, server, capsys):
    endless = Answer(429, {"message": "wait"}, {"retry-after": "3600"})
    status_route(server, "amara", endless)
    for name in ("ben", "chidi"):
        status_route(server, name)
    sleeps: list[float] = []
    assert publish(graded, server, sleeps) == 1
    assert sleeps == []  # never waits past the bound
    out = capsys.readouterr().out
    assert "amara" in out and "still limited the rate of POST" in out
    assert read_published(graded["out"], "amara") == {}  # transient: the next run tries again
    assert unpublished(graded["out"]) == ["amara"]


def test_a_repository_that_does_not_exist_fails_that_learner_only(graded, server, capsys):
    status_route(server, "amara")  # ben's and chidi's repositories: no route, so 404
    assert publish(graded, server) == 1
    out = capsys.readouterr().out
    assert "GitHub answered 404 Not Found to POST /repos/org/t101-ben/statuses/" in out
    assert "the repository does not exist, or the token cannot see it" in out
    assert "1 sent, 0 unchanged since sent, 2 failed" in out
    failed = read_published(graded["out"], "ben")
    assert failed["commit"] == SHA["ben"] and "404" in failed["failed"]
    assert unpublished(graded["out"]) == []  # handled: a schedule alone does not retry it
    assert publish(graded, server) == 1  # but the next publish does
    assert len(server.made("POST", f"/repos/org/t101-ben/statuses/{SHA['ben']}")) == 2


def test_the_token_is_never_printed_or_written(graded, server, capsys, tmp_path):
    server.answer(
        "POST",
        f"/repos/org/t101-amara/statuses/{SHA['amara']}",
        Answer(401, {"message": f"Bad credentials {TOKEN}"}),
    )
    assert publish(graded, server) == 1
    assert publish(graded, server, dry_run=True) == 0
    said = capsys.readouterr()
    assert TOKEN not in said.out + said.err
    assert "Bad credentials ***" in said.out
    for file in tmp_path.rglob("*"):
        if file.is_file():
            assert TOKEN not in file.read_text(encoding="utf-8", errors="replace"), file


def test_dry_run_prints_each_request_and_sends_nothing(graded, server, capsys):
    env = env_for(server, GH_TOKEN="")
    assert publish(graded, server, dry_run=True, env=env) == 0
    assert server.requests == []
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"POST {server.url}/repos/org/t101-amara/statuses/{SHA['amara']} ")
    assert json.loads(lines[0].split(" ", 2)[2])["state"] == "success"
    assert len(lines) == 4
    assert lines[3] == (
        "Dry run: nothing was sent; requests for 3 of 4 learners above. 1 has no graded commit "
        "(a folder that is not a git repository, or nothing submitted), so publish sends nothing "
        "for them: dara."
    )
    assert not (graded["out"] / "amara" / PUBLISHED_FILE).exists()


def test_without_a_token_nothing_is_sent(graded, server, capsys):
    assert publish(graded, server, env=env_for(server, GH_TOKEN="")) == 2
    assert "No GitHub token: set GH_TOKEN" in capsys.readouterr().err
    assert server.requests == []


def test_github_enterprise_urls(graded, server):
    graded["roster"].write_text(
        "learner,repo\n"
        "amara,https://ghe.example.edu/org/t101-amara.git\n"
        "ben,git@ghe.example.edu:org/t101-ben.git\n"
        "chidi,https://github.com/org/t101-chidi.git\n"
        "dara,dara\n"
    )
    api = "/api/v3"
    for name in ("amara", "ben"):
        server.answer("POST", f"{api}/repos/org/t101-{name}/statuses/{SHA[name]}", Answer(201, {}))
    env = env_for(server, GITHUB_SERVER_URL="https://ghe.example.edu")
    env["GITHUB_API_URL"] = server.url + api
    assert publish(graded, server, env=env) == 1  # chidi's URL is on github.com
    assert {r.path for r in server.made("POST")} == {
        f"{api}/repos/org/t101-amara/statuses/{SHA['amara']}",
        f"{api}/repos/org/t101-ben/statuses/{SHA['ben']}",
    }
    assert "not on ghe.example.edu" in read_published(graded["out"], "chidi")["failed"]
    body = server.made("POST")[0].body
    assert body["target_url"] == "https://ghe.example.edu/org/t101-instructor/actions/runs/4242"


def test_a_learner_missing_from_the_roster_is_a_failed_row(graded, server, capsys):
    graded["roster"].write_text("learner,repo,github\namara,amara,org/t101-amara\n")
    status_route(server, "amara")
    assert publish(graded, server) == 1
    assert "ben has a row in" in capsys.readouterr().out
