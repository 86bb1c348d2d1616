"""`autograder release --out DIR`: build the learner repository from the course repository.

The steps and their order are in autograder/release/pipeline.py. The release holds the stubs,
the `autograder` package, the visible tests, course.toml, pyproject.toml, a learner README, the
grading workflow and a manifest of protected files; never the references, the hidden tests or
anything else. The same course repository always gives byte-identical files.

Exit status: 0 written; 2 not written (the reason is printed as sentences).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from autograder.atomic_files import PATH_ERRORS
from autograder.config import CourseConfig, CourseConfigError, load_course_option
from autograder.release.pipeline import ReleaseError, build_release, write_release
from autograder.results.pass_rule import PassRule, PassRuleError

WRITTEN = "Wrote the learner release ({count} files) to {out}."
NOTES_MISSING = "The notes file {path} cannot be read: {reason}; expected a Markdown file."
NOT_WRITTEN = (
    "Could not write the learner release to {out} ({why}: {file}); nothing of it was kept: free "
    "some space or choose another folder, then run the same command again."
)


NOT_WRITTEN_THERE = (
    "Could not write the learner release to {out} ({why}: {file}); nothing of it was kept: "
    "choose an output folder whose parents are folders, then run the same command again."
)
RULE_TOO_HIGH = (
    "The pass rule {rule} asks for more points than the course has ({most:g}): no learner "
    "could pass; expected a minimum of at most {most:g}."
)
#: The largest notes file: GitHub refuses files over 100 MB, and a README is read by people.
MAX_NOTES = 1024 * 1024


def main(
    *,
    out: Path,
    course: Path | None,
    pass_rule: str | None,
    notes: Path | None,
    notebook: bool = False,
) -> int:
    """Build and write the release; return the exit status described above. pass_rule None:
    course.toml's [ci] pass_rule."""
    try:
        config = load_course_option(course)
        rule = PassRule.parse(config.ci.pass_rule if pass_rule is None else pass_rule)
        most = course_points(config)
        if rule.min_score is not None and rule.min_score > most:
            print(RULE_TOO_HIGH.format(rule=rule, most=most), file=sys.stderr)
            return 2
        try:
            text = _read_notes(notes) if notes else ""
        except (OSError, UnicodeDecodeError, ValueError) as error:
            print(NOTES_MISSING.format(path=notes, reason=error), file=sys.stderr)
            return 2
        release = build_release(config, pass_rule=rule, notes=text, notebook=notebook)
        fresh = not out.exists()
        try:
            written = write_release(release, out)
        except OSError as error:
            # write_release writes only into a new or empty folder: all in it is this release's.
            # A half-written one would make the rerun refuse the folder as not empty.
            _remove_partial(out, fresh)
            file = error.filename or out
            template = NOT_WRITTEN_THERE if error.errno in PATH_ERRORS else NOT_WRITTEN
            print(template.format(out=out, file=file, why=error.strerror), file=sys.stderr)
            return 2
    except (CourseConfigError, PassRuleError, ReleaseError) as error:
        print(str(error), file=sys.stderr)
        return 2
    print(WRITTEN.format(count=len(written), out=out))
    return 0


def _read_notes(path: Path) -> str:
    """The notes file's text (UTF-8, a byte-order mark dropped); ValueError past MAX_NOTES."""
    if path.stat().st_size > MAX_NOTES:
        raise ValueError(f"it is larger than {MAX_NOTES // 1024} KiB")
    return path.read_text(encoding="utf-8-sig")


def course_points(config: CourseConfig) -> float:
    """The most points a learner can score: the components' and any notebook's."""
    from autograder.notebook import notebook_components

    notebooks = notebook_components(config.root)
    return sum(c.points for c in config.components) + sum(p for _, _, p in notebooks)


def _remove_partial(out: Path, fresh: bool) -> None:
    """Remove what a failed write_release left in out (out too when this command made it)."""
    if fresh:
        shutil.rmtree(out, ignore_errors=True)
        return
    try:
        for child in out.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)
    except OSError:  # not a folder, or one this command can no longer change
        pass
