"""Keep the toy graders out of the repository's own test run.

They are collected only when a pytest run grades this toy course (`--course` pointing here, as
tests/framework does through `autograder grade`).
"""

from pathlib import Path

from autograder.pytest_plugin import active_course

HERE = Path(__file__).resolve().parent


def pytest_ignore_collect(collection_path, config):
    course = active_course(config)
    if course is None or course.root != HERE:
        return True
    return None
