"""`autograder release --out DIR`: build the learner repository from the course repository.

The steps and their order are in autograder/release/pipeline.py. The release holds the stubs,
the `autograder` package, the visible tests, course.toml, pyproject.toml, a learner README, the
grading workflow and a manifest of protected files; never the references, the hidden tests or
anything else. The same course repository always gives byte-identical files.

Exit status: 0 written; 2 not written (the reason is printed as sentences).
"""

from __future__ import annotations

import sys
from pathlib import Path

from autograder.config import CourseConfigError, find_course_file, load_course
from autograder.github.pass_rule import PassRule, PassRuleError
from autograder.release.pipeline import ReleaseError, build_release, write_release

WRITTEN = "Wrote the learner release ({count} files) to {out}."
NOTES_MISSING = "The notes file {path} cannot be read: {reason}; expected a Markdown file."


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
        config = load_course(course if course else find_course_file(Path.cwd()))
        rule = PassRule.parse(config.ci.pass_rule if pass_rule is None else pass_rule)
        text = notes.read_text(encoding="utf-8") if notes else ""
        release = build_release(config, pass_rule=rule, notes=text, notebook=notebook)
        written = write_release(release, out)
    except (CourseConfigError, PassRuleError, ReleaseError) as error:
        print(str(error), file=sys.stderr)
        return 2
    except (OSError, UnicodeDecodeError) as error:
        print(NOTES_MISSING.format(path=notes, reason=error), file=sys.stderr)
        return 2
    print(WRITTEN.format(count=len(written), out=out))
    return 0
