"""course.toml loading: typed values, resolved paths, and one full sentence per mistake."""

from pathlib import Path

import pytest

from autograder.config import (
    COURSE_FILE_MISSING,
    NO_COURSE_FILE,
    NO_PACKAGE,
    SUBMISSION_MISSING,
    SUBMISSION_NOT_FOLDER,
    CourseConfigError,
    SubmissionError,
    find_course_file,
    load_course,
    load_course_option,
)

TOY = Path(__file__).parent / "toy_course"

GOOD = """\
[course]
name = "Mini"
package = "minipkg"
package_dir = "src/minipkg"
visible_tests = "graders/visible"
hidden_tests = "graders/hidden"

[[components]]
name = "alpha"
module = "alpha"
title = "Alpha"
points = 4

[[components]]
name = "beta"
module = "sub.beta"
title = "Beta"
points = 6.5
"""


def write(folder: Path, text: str) -> Path:
    path = folder / "course.toml"
    path.write_text(text, encoding="utf-8")
    return path


def error_of(folder: Path, text: str) -> str:
    with pytest.raises(CourseConfigError) as caught:
        load_course(write(folder, text))
    return str(caught.value)


def test_toy_course_loads_with_paths_resolved_against_the_course_file():
    config = load_course(TOY / "course.toml")
    assert config.course.name == "Toy Course"
    assert config.package == "toypkg"
    assert [c.name for c in config.components] == ["scale", "normalize"]
    assert [c.points for c in config.components] == [10.0, 5.0]
    assert config.root == TOY.resolve()
    assert config.visible_tests == TOY.resolve() / "tests/graders/visible"
    assert config.hidden_tests == TOY.resolve() / "tests/graders/hidden"
    assert config.course.reference_dir == TOY.resolve() / "solution/toypkg"
    assert config.course.hidden_visibility == "after_published"
    assert config.limits.output_kb == 4
    assert config.forbidden.apis == ("numpy.linalg.norm",)
    assert config.forbidden.sentence("numpy.linalg.norm").startswith(
        "Write the norm yourself; numpy.linalg.norm does it for you"
    )


def test_defaults_fill_limits_and_forbidden(tmp_path):
    config = load_course(write(tmp_path, GOOD))
    assert config.limits.test_timeout == 10.0
    assert config.limits.memory_mb == 4096
    assert config.forbidden.apis == ()
    assert config.hidden_tests == tmp_path.resolve() / "graders/hidden"
    assert str(config.course.package_dir) == "src/minipkg"  # stays relative to any repository


def test_component_lookups(tmp_path):
    config = load_course(write(tmp_path, GOOD))
    assert config.component("beta").title == "Beta"
    with pytest.raises(KeyError, match="has no component 'gamma'; expected one of: alpha, beta"):
        config.component("gamma")
    assert config.component_for_file("alpha.py").name == "alpha"
    assert config.component_for_file("minipkg/alpha.py").name == "alpha"
    assert config.component_for_file("/tmp/x/minipkg/sub/beta.py").name == "beta"
    assert config.component_for_file("beta.py") is None  # beta lives in sub/
    assert config.component_for_file("__init__.py") is None
    assert config.component_for_file("not_alpha.py") is None


def test_submission_package_dir_accepts_the_repository_or_the_package(tmp_path):
    config = load_course(write(tmp_path, GOOD))
    repo = tmp_path / "alice"
    package = repo / "src" / "minipkg"
    package.mkdir(parents=True)
    assert config.package_dir_for(repo) == package.resolve()
    assert config.package_dir_for(package) == package.resolve()
    assert config.submission_root(repo) == repo.resolve()
    assert config.submission_root(package) == repo.resolve()


def test_submission_errors_are_sentences(tmp_path):
    config = load_course(write(tmp_path, GOOD))
    missing = tmp_path / "nobody"
    with pytest.raises(SubmissionError) as caught:
        config.package_dir_for(missing)
    assert str(caught.value) == SUBMISSION_MISSING.format(path=missing)
    with pytest.raises(SubmissionError) as caught:
        config.package_dir_for(tmp_path / "course.toml")
    assert str(caught.value) == SUBMISSION_NOT_FOLDER.format(path=tmp_path / "course.toml")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SubmissionError) as caught:
        config.package_dir_for(empty)
    assert str(caught.value) == NO_PACKAGE.format(
        path=empty, package_dir="src/minipkg", package="minipkg"
    )


def test_find_course_file_searches_upward(tmp_path):
    path = write(tmp_path, GOOD)
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    assert find_course_file(nested) == path.resolve()
    assert find_course_file(path) == path.resolve()


def test_a_commands_course_option_is_that_file_else_the_nearest_course_file(tmp_path, monkeypatch):
    write(tmp_path, GOOD)
    nested = tmp_path / "a"
    nested.mkdir()
    monkeypatch.chdir(nested)
    assert load_course_option(None).path == (tmp_path / "course.toml").resolve()
    assert load_course_option(TOY / "course.toml").package == "toypkg"


def test_find_course_file_says_where_it_looked(tmp_path):
    if any((p / "course.toml").exists() for p in tmp_path.parents):
        pytest.skip("a course.toml above the temporary folder is found from anywhere")
    with pytest.raises(CourseConfigError) as caught:
        find_course_file(tmp_path)
    assert str(caught.value) == NO_COURSE_FILE.format(name="course.toml", start=tmp_path.resolve())


def test_missing_file(tmp_path):
    with pytest.raises(CourseConfigError) as caught:
        load_course(tmp_path / "course.toml")
    assert str(caught.value) == COURSE_FILE_MISSING.format(
        path=(tmp_path / "course.toml").resolve(), name="course.toml"
    )


def test_toml_syntax_error_names_the_file_and_line(tmp_path):
    message = error_of(tmp_path, GOOD.replace('title = "Beta"', 'title = "Beta'))
    assert message.startswith(f"{(tmp_path / 'course.toml').resolve()} is not valid TOML: ")
    assert "(at line 17, column 14)" in message


def test_unknown_keys_are_refused_with_their_path(tmp_path):
    message = error_of(tmp_path, GOOD.replace("points = 4", "points = 4\npointz = 5"))
    assert 'the key pointz of component "alpha" is not a course setting' in message
    message = error_of(tmp_path, GOOD + "\n[grading]\nstrict = true\n")
    assert "the key grading is not a course setting" in message
    message = error_of(tmp_path, 'path = "/elsewhere/course.toml"\n' + GOOD)
    assert "the key path is not a course setting" in message


@pytest.mark.parametrize(
    "points, expected",
    [
        ("0", "a number greater than 0; got 0"),
        ("-2", "a number greater than 0; got -2"),
        ("inf", "a finite number; got inf"),  # H43: failed inside the grader
        ("1e9", "a number at most 10,000; got 1000000000.0"),
        ('"25"', "a number; got '25'"),  # H46: a string was read as 25 (limits refuse it)
    ],
)
def test_points_are_positive_finite_and_bounded(tmp_path, points, expected):
    message = error_of(tmp_path, GOOD.replace("points = 4", f"points = {points}"))
    assert message.endswith(f'points of component "alpha" must be {expected}.')


def test_wrong_types_say_expected_and_got(tmp_path):
    text = GOOD.replace('name = "Mini"', 'name = "Mini"\nhidden_visibility = "later"')
    message = error_of(tmp_path, text + '\n[limits]\nmemory_mb = "lots"\n')
    assert (
        "course.hidden_visibility must be 'hidden', 'after_due_date', 'after_published' or "
        "'visible'; got 'later'." in message
    )
    assert "limits.memory_mb must be a whole number; got 'lots'." in message


@pytest.mark.parametrize(
    "setting, said",
    [
        ("value_mb = true", "limits.value_mb must be a whole number; got true."),
        ('value_mb = "16"', "limits.value_mb must be a whole number; got '16'."),
        ("value_mb = 16.0", "limits.value_mb must be a whole number; got 16.0."),
        ("hang_strikes = true", "limits.hang_strikes must be a whole number; got true."),
        ('test_timeout = "10"', "limits.test_timeout must be a number; got '10'."),
        ("test_timeout = inf", "limits.test_timeout must be a finite number; got inf."),
        ("import_timeout = 1e300", "limits.import_timeout must be a number at most 3,600; got"),
        ("memory_mb = 99999999999", "limits.memory_mb must be a number at most 1,048,576; got"),
        (
            "memory_mb = 128\nvalue_mb = 256",
            "limits.value_mb must be at most limits.memory_mb (128): learner code cannot build a "
            "value larger than its whole memory; got 256.",
        ),
    ],
)
def test_limits_are_strict_and_bounded(tmp_path, setting, said):
    """H41: pydantic's lax mode read value_mb = true as 1 MiB and "16" as 16, and nothing
    bounded a limit (inf seconds, 10**11 MiB)."""
    assert said in error_of(tmp_path, GOOD + f"\n[limits]\n{setting}\n")


def test_limits_take_whole_numbers_for_seconds_and_the_default_value_size_fits_memory(tmp_path):
    config = load_course(write(tmp_path, GOOD + "\n[limits]\ntest_timeout = 5\nmemory_mb = 128\n"))
    assert (config.limits.test_timeout, config.limits.value_mb) == (5.0, 128)  # H45: not 256
    assert load_course(write(tmp_path, GOOD)).limits.value_mb == 256


def test_duplicate_component_names_and_modules(tmp_path):
    message = error_of(tmp_path, GOOD.replace('name = "beta"', 'name = "alpha"'))
    assert "components[1].name is 'alpha', already used by components[0]" in message
    message = error_of(tmp_path, GOOD.replace('module = "sub.beta"', 'module = "alpha"'))
    assert (
        'module of component "beta" is \'alpha\', already used by component "alpha"; each '
        "component needs its own module" in message
    )


def test_missing_required_key(tmp_path):
    message = error_of(tmp_path, GOOD.replace('package = "minipkg"\n', ""))
    assert message.endswith("the required key course.package is missing.")


def test_component_names_must_be_usable_as_markers(tmp_path):
    message = error_of(tmp_path, GOOD.replace('name = "alpha"', 'name = "weight"'))
    assert "components[0].name must be a name that is not reserved" in message
    message = error_of(tmp_path, GOOD.replace('name = "alpha"', 'name = "al-pha"'))
    assert "components[0].name must be a name (letters, digits and underscores" in message


def test_a_key_inside_a_component_is_named_by_the_component_when_its_name_is_known(tmp_path):
    nested = GOOD.replace('module = "alpha"', 'module = "alpha"\nforbidden = { calls = 3 }')
    assert 'the key forbidden of component "alpha" is not a course setting' in error_of(
        tmp_path, nested
    )
    message = error_of(tmp_path, GOOD.replace('module = "sub.beta"\n', ""))
    assert message.endswith('the required key module of component "beta" is missing.')
    nameless = GOOD.replace('name = "alpha"\n', "").replace("points = 4", "points = 0")
    message = error_of(tmp_path, nameless)
    assert "the required key components[0].name is missing." in message
    assert "components[0].points must be a number greater than 0; got 0." in message
    message = error_of(
        tmp_path,
        GOOD.replace('depends_on = ["x"]', "").replace(
            "points = 6.5\n", 'points = 6.5\ndepends_on = ["gamma"]\n'
        ),
    )
    assert "depends_on of component \"beta\" names 'gamma'; expected the name of another" in message


def test_package_dir_must_stay_inside_the_repository(tmp_path):
    message = error_of(tmp_path, GOOD.replace('"src/minipkg"', '"../minipkg"'))
    assert "course.package_dir must be a relative path inside the repository" in message


def test_forbidden_message_placeholder(tmp_path):
    message = error_of(tmp_path, GOOD + '\n[forbidden]\nmessage = "Do not use {name}."\n')
    assert "forbidden.message must be a sentence whose only placeholder is {api}" in message


def test_every_problem_is_reported_at_once(tmp_path):
    text = GOOD.replace("points = 4", "points = 0").replace("points = 6.5", "points = -1")
    message = error_of(tmp_path, text)
    assert 'points of component "alpha"' in message and 'points of component "beta"' in message


def test_a_depends_on_cycle_is_refused_with_its_path(tmp_path):
    text = GOOD.replace("points = 4\n", 'points = 4\ndepends_on = ["beta"]\n').replace(
        "points = 6.5\n", 'points = 6.5\ndepends_on = ["alpha"]\n'
    )
    message = error_of(tmp_path, text)
    assert 'depends_on of component "alpha" closes a cycle (alpha -> beta -> alpha)' in message
    one_way = GOOD.replace("points = 6.5\n", 'points = 6.5\ndepends_on = ["alpha"]\n')
    assert load_course(write(tmp_path, one_way)).components[1].depends_on == ("alpha",)


def test_a_folder_setting_that_is_not_a_string_says_so(tmp_path):
    message = error_of(
        tmp_path, GOOD.replace('hidden_tests = "graders/hidden"', "hidden_tests = 5")
    )
    assert message.endswith("course.hidden_tests must be a path (a string); got 5.")
