"""`autograder publish --comment`: one marked comment per open pull request of the graded
commit, found again across pages and edited, never repeated."""

from __future__ import annotations

import shutil

from autograder.commands import publish_statuses
from autograder.github.pr_comment import INSTRUCTOR_MARKER
from autograder.github.published import read_published

from .conftest import COURSE, SHA, env_for
from .recording_server import Answer

PULLS = "/repos/org/t101-amara/pulls"
COMMENTS = "/repos/org/t101-amara/issues/7/comments"


def publish(graded, server, **options):
    graded["roster"].write_text("learner,repo,github\namara,amara,org/t101-amara\n")
    for name in ("ben", "chidi", "dara"):
        shutil.rmtree(graded["out"] / name, ignore_errors=True)
    settings = dict(statuses=False, comment=True, dry_run=False, resend=False)
    settings.update(options)
    return publish_statuses.main(
        out=graded["out"],
        roster_path=graded["roster"],
        course=COURSE,
        env=env_for(server),
        sleep=lambda seconds: None,
        **settings,
    )


def pulls_over_two_pages(server) -> None:
    """Page 1: a pull request of another commit, and a Link to page 2, which holds #7, whose
    head is amara's graded commit."""

    def pulls(request):
        if request.query.get("page") == ["2"]:
            return Answer(200, [{"number": 7, "head": {"sha": SHA["amara"]}}])
        link = '<{url}/repos/org/t101-amara/pulls?state=open&per_page=100&page=2>; rel="next"'
        return Answer(200, [{"number": 3, "head": {"sha": "f" * 40}}], {"link": link})

    server.handle("GET", PULLS, pulls)
    server.answer("GET", "/user", Answer(200, {"login": "instructor"}))


def test_the_comment_is_created_once_then_edited(graded, server):
    pulls_over_two_pages(server)
    server.answer("GET", COMMENTS, Answer(200, []))
    server.answer("POST", COMMENTS, Answer(201, {"id": 99}))
    assert publish(graded, server) == 0
    posted = server.made("POST", COMMENTS)
    assert len(posted) == 1
    body = posted[0].body["body"]
    assert body.startswith(INSTRUCTOR_MARKER)
    assert "## Transformers 101: your instructor's grade, 100.00 / 100.00" in body
    assert "| Multi-head attention | 25.00 |" in body
    assert f"`{SHA['amara'][:12]}`" in body
    assert "test_" not in body  # no hidden test's name
    assert "\n✅ 100.00 / 100.00 points with the hidden tests: passed" in body
    assert body.rstrip().endswith(
        "These scores include hidden tests, which your instructor runs but does not show you. "
        "The commit status **Transformers 101 / hidden tests** on this commit shows the same "
        "score. After you push again, this comment changes once your instructor's next grading "
        "run has graded your new commit. To find out why a hidden test failed, ask your "
        "instructor for your summary.md."
    )
    assert [r.query.get("page") for r in server.made("GET", PULLS)] == [None, ["2"]]
    assert read_published(graded["out"], "amara")["comments"] == {"org/t101-amara#7": 99}
    # published again (--resend): the comment known from published.json is edited
    server.answer("PATCH", "/repos/org/t101-amara/issues/comments/99", Answer(200, {"id": 99}))
    assert publish(graded, server, resend=True) == 0
    assert len(server.made("POST", COMMENTS)) == 1
    assert len(server.made("PATCH")) == 1


def test_after_a_regrade_the_marked_comment_of_the_same_account_is_found_and_edited(graded, server):
    pulls_over_two_pages(server)
    forged = {"id": 5, "body": f"{INSTRUCTOR_MARKER} mine!", "user": {"login": "amara-o"}}
    ours = {"id": 6, "body": f"{INSTRUCTOR_MARKER}\nold", "user": {"login": "instructor"}}

    def comments(request):
        if request.query.get("page") == ["2"]:
            return Answer(200, [ours])
        link = f'<{{url}}{COMMENTS}?per_page=100&page=2>; rel="next"'
        return Answer(
            200, [forged, {"id": 4, "body": "hi", "user": {"login": "x"}}], {"link": link}
        )

    server.handle("GET", COMMENTS, comments)
    server.answer("PATCH", "/repos/org/t101-amara/issues/comments/6", Answer(200, {"id": 6}))
    assert publish(graded, server) == 0
    assert [r.path for r in server.made("PATCH")] == ["/repos/org/t101-amara/issues/comments/6"]
    assert server.made("POST") == []
    assert read_published(graded["out"], "amara")["comments"] == {"org/t101-amara#7": 6}


def test_a_learner_comment_with_the_marker_is_not_taken_for_ours(graded, server):
    pulls_over_two_pages(server)
    forged = {"id": 5, "body": f"{INSTRUCTOR_MARKER} mine!", "user": {"login": "amara-o"}}
    server.answer("GET", COMMENTS, Answer(200, [forged]))
    server.answer("POST", COMMENTS, Answer(201, {"id": 8}))
    assert publish(graded, server) == 0
    assert server.made("PATCH") == []
    assert len(server.made("POST", COMMENTS)) == 1


def test_a_foreign_next_page_is_not_followed(graded, server, capsys):
    link = '<https://elsewhere.example/repos/org/t101-amara/pulls?page=2>; rel="next"'
    server.answer("GET", PULLS, Answer(200, [], {"link": link}))
    assert publish(graded, server) == 1
    assert "points to its next page at another address (https://elsewhere.example)" in (
        capsys.readouterr().out
    )
