"""`autograder merge SHARD_DIR... --out DIR`: combine `grade-class --shard` outputs.

Copies every finished learner folder (one with a record.json) of every shard into DIR, each
through DIR/.partial and a rename, then rebuilds gradebook.csv and the class report from all
of DIR's records, exactly as `grade-class` does. A learner found in two shards is refused:
shards of one roster never overlap, so it means the wrong folders were given.

Exit status as grade-class: 0 every merged learner was graded, 1 some rows carry an error,
2 nothing could be merged (with one sentence on stderr).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from autograder.commands.grade_class import finish
from autograder.config import CourseConfigError, find_course_file, load_course
from autograder.gradebook import store

NO_SHARDS = "Name at least one shard output folder to merge."
NOT_A_SHARD = "{path} is not a grade-class output folder (it has no learner records)."
TWICE = (
    "The learner {learner} is in two shard folders ({first} and {second}); merge the outputs "
    "of one sharded run, each shard once."
)
INTO_ITSELF = "The output folder {out} is also one of the shards; merge into a new folder."


def main(*, shards: list[Path], out: Path, course: Path | None, quiet: bool) -> int:
    """Merge the shard folders into out; return the exit status of the module docstring."""
    try:
        config = load_course(course if course else find_course_file(Path.cwd()))
    except CourseConfigError as error:
        return _error(str(error))
    if not shards:
        return _error(NO_SHARDS)
    out = Path(out).resolve()
    found: dict[str, Path] = {}
    for shard in map(Path, shards):
        if shard.resolve() == out:
            return _error(INTO_ITSELF.format(out=out))
        records = store.read_records(shard)
        if not records:
            return _error(NOT_A_SHARD.format(path=shard))
        for record in records:
            if record.learner in found:
                return _error(
                    TWICE.format(learner=record.learner, first=found[record.learner], second=shard)
                )
            found[record.learner] = shard
    out.mkdir(parents=True, exist_ok=True)
    store.clear_partial(out)
    for learner, shard in sorted(found.items()):
        staged = store.staging_dir(out, learner)
        shutil.rmtree(staged)
        shutil.copytree(store.learner_dir(shard, learner), staged)
        record = store.read_record(shard, learner)
        assert record is not None  # read_records returned it a moment ago
        store.commit_learner(out, staged, record)
    return finish(config, out, None, quiet=quiet)


def _error(sentence: str) -> int:
    print(sentence, file=sys.stderr)
    return 2
