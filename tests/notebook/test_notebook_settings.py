"""course.toml's [notebook] table: the notebook's own limits and data, checked as [limits] is."""

from __future__ import annotations

import pytest

from autograder.config import CourseConfigError, load_course
from tests.notebook.conftest import ROOT


def course_with(tmp_path, table: str):
    text = (ROOT / "course.toml").read_text(encoding="utf-8")
    start = text.index("[notebook]")
    end = text.index("\n\n", start)
    path = tmp_path / "course.toml"
    path.write_text(text[:start] + table + text[end:], encoding="utf-8")
    return path


def test_the_course_sets_the_notebooks_memory_time_and_data():
    settings = load_course(ROOT / "course.toml").notebook
    assert (settings.memory_mb, settings.cell_timeout) == (4096, 60.0)
    assert settings.grader_only == ("toy_vectors.txt",)
    assert settings.data_name == "GloVe 6B 50-d"


@pytest.mark.parametrize(
    "table, said",
    [
        ("[notebook]\nmemory_mb = true", "notebook.memory_mb must be a whole number; got true."),
        ("[notebook]\ncell_timeout = 0", "notebook.cell_timeout must be a number greater than 0"),
        (
            '[notebook]\ngrader_only = ["../secret.txt"]',
            "notebook.grader_only must be a list of file names beside the source notebook",
        ),
        ("[notebook]\nmemory = 1", "the key notebook.memory is not a course setting"),
    ],
)
def test_a_wrong_notebook_setting_is_one_sentence(tmp_path, table, said):
    with pytest.raises(CourseConfigError) as refused:
        load_course(course_with(tmp_path, table))
    assert said in str(refused.value)
