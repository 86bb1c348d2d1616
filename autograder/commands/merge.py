"""`autograder merge SHARD_DIR... --out DIR`: combine `grade-class --shard` outputs.

Copies every finished learner folder (one with a record.json) of every shard that the shard's
DIR/run.json lists into DIR, then rebuilds gradebook.csv and the class report from all of
DIR's records, exactly as `grade-class` does. It holds DIR's lock and a shared lock on each
shard (gradebook/lock.py).

* Refused (one sentence on stderr, nothing written): a learner in two shards; shards graded with
  different settings, from different splits or rosters; a whole-class run mixed with anything
  else; learners of the report's reserved names; a DIR holding, at a learner's name, anything
  the grader did not write (store.foreign). DIR may be an earlier merge of the same run.
* Said on stderr and in the class report: shards of the run not given, or not finished.
* Exit status as grade-class: 0 every merged learner was graded, 1 some rows carry an error,
  2 nothing could be merged; 3 when shards of the run are missing or did not finish.

Design: docs/internals/gradebook.md#merging-shards.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from autograder.config import CourseConfig, CourseConfigError, load_course_option
from autograder.gradebook import changed_settings, lock, report_build, store
from autograder.gradebook.class_output import finish
from autograder.gradebook.roster import RESERVED_IDS
from autograder.notebook.hand_grades import carry_from_shards

NO_SHARDS = "Name at least one shard output folder to merge."
NOT_A_SHARD = "{path} is not a grade-class output folder (it has no learner records)."
NO_SUCH_SHARD = "The shard folder {path} does not exist."
TWICE = (
    "The learner {learner} is in two shard folders ({first} and {second}); merge the outputs "
    "of one sharded run, each shard once."
)
MIXED = (
    "The shard folders {first} and {second} were graded with different settings ({what}); "
    "merge the shards of one run, each graded with the same options and course."
)
MIXED_UNNAMED = (
    "--deadline, --timeout, --seed, --manifest, or the course's files: course.toml, graders, "
    "references"
)
OLDER = (
    "The shard folder {old} was graded by an older version of the autograder, which did not "
    "record its settings, and {new} by this one; grade every shard with one version and the "
    "same options."
)
NOT_A_MERGE = (
    "The output folder {out} already holds learners that no merge wrote (a grade-class run's, "
    "say); merge into a new folder, or into the folder of an earlier merge of this run."
)
INTO_ITSELF = "The output folder {out} is also one of the shards; merge into a new folder."
OTHER_SPLITS = (
    "The shard folders {first} ({first_shard}) and {second} ({second_shard}) come from "
    "different splits of a roster; merge the shards of one run, each graded with the same "
    "--shard I/N count."
)
OTHER_ROSTERS = (
    "The shard folders {first} and {second} were graded from different rosters; merge the "
    "shards of one run."
)
SHARD_NOT_DONE = (
    "Not graded yet: its shard's grade-class run stopped before it graded {learner}; run that "
    "shard again, then merge."
)
SHARD_NOT_GIVEN = (
    "Not graded here: {learner} is in shard {shard}, which this merge was not given; merge "
    "that shard's folder too (grade it with grade-class --shard {shard} first if it has none)."
)
INCOMPLETE = (
    "Shard {shards} did not finish grading (its run was interrupted or is being resumed); the "
    "gradebook lacks some of its learners: run its grade-class again, then merge."
)
WHOLE_RUN = (
    "The folder {path} holds a whole-class grade-class run, not a shard; merge the shard "
    "folders of one sharded run (a whole run needs no merge)."
)
RESERVED = (
    "The shard folder {shard} holds a learner named {learner!r}, the name of one of the class "
    "report's files; rename that learner in the roster and grade that shard again."
)
EXIT_MISSING_SHARDS = 3


@dataclass
class _Shards:
    """What the shard folders given (and an earlier merge into DIR) hold."""

    found: dict[str, Path] = field(default_factory=dict)  # learner -> their shard
    digests: dict[Path, str] = field(default_factory=dict)  # settings digest ("": not recorded)
    instants: dict[Path, str] = field(default_factory=dict)  # the same, deadline as an instant
    given: list[str] = field(default_factory=list)  # each shard's own --shard i/n, if it says
    runs: dict[Path, dict] = field(default_factory=dict)  # shard -> its run.json, if any

    def refusal(self) -> str:
        """Why these shards must not be merged together ("" when they may be)."""
        return (
            _settings_refusal(self.digests, self.instants, _options(self.runs))
            or _run_refusal(self.runs)
            or _whole_runs(self.runs)
        )


def main(*, shards: Sequence[Path], out: Path, course: Path | None, quiet: bool) -> int:
    """Merge the shard folders into out; return the exit status of the module docstring."""
    try:
        config = load_course_option(course)
    except CourseConfigError as error:
        return _error(str(error))
    if not shards:
        return _error(NO_SHARDS)
    out = Path(out).resolve()
    if any(Path(shard).resolve() == out for shard in shards):
        return _error(INTO_ITSELF.format(out=out))
    with ExitStack() as held:
        try:
            for shard in shards:  # none may still be being graded while it is copied
                if Path(shard).is_dir():
                    held.enter_context(lock.hold(Path(shard), "merge", shared=True))
        except lock.LockError as busy:
            return _error(str(busy))
        read = _read_shards([Path(shard) for shard in shards])
        if isinstance(read, str):
            return _error(read)
        out.mkdir(parents=True, exist_ok=True)
        try:
            held.enter_context(lock.hold(out, "merge"))
        except lock.LockError as busy:
            return _error(str(busy))
        refusal = _with_earlier_merge(out, read) or read.refusal()
        refusal = refusal or store.foreign(out, list(read.found))
        if refusal:
            return _error(refusal)
        try:
            return _merge_shards(config, read, out, quiet)
        except FileExistsError as error:  # something put in out meanwhile: store.FOREIGN
            return _error(str(error))


def _read_shards(shards: list[Path]) -> _Shards | str:
    """What each shard folder holds (only the learners its run.json lists, when it has one);
    or why they cannot be merged: one sentence."""
    read, twice = _Shards(), ""
    for shard in shards:
        if not shard.is_dir():
            return NO_SUCH_SHARD.format(path=shard)
        records = store.read_records(shard)
        run = store.read_run(shard)
        if not records and run is None:
            return NOT_A_SHARD.format(path=shard)
        if run is not None:
            read.runs[shard] = run
            if run["learners"]:  # not a learner an earlier run left in that folder (H37)
                records = [r for r in records if r.learner in run["learners"]]
        for record in records:
            if record.learner in read.found and not twice:
                first = read.found[record.learner]
                twice = TWICE.format(learner=record.learner, first=first, second=shard)
            read.found[record.learner] = shard
        recorded = {r.settings for r in records if r.settings}
        read.digests[shard] = run["settings"] if run else (recorded.pop() if recorded else "")
        read.instants[shard] = run["same_as"] if run else ""
        read.given.append(run["shard"] if run else _recorded_shard(records))
    refusal = read.refusal() or twice
    reserved = sorted(learner for learner in read.found if learner.lower() in RESERVED_IDS)
    if reserved:  # learners of versions that allowed these ids: their folder is a file now
        refusal = refusal or RESERVED.format(learner=reserved[0], shard=read.found[reserved[0]])
    return refusal or read


def _with_earlier_merge(out: Path, read: _Shards) -> str:
    """An output folder with learners already: only an earlier merge's, of the same settings,
    whose learners and shards this merge adds to (H34 mixed two deadlines): its run joins
    ``read``. NOT_A_MERGE for any other ("" when it may be merged into)."""
    earlier = store.read_run(out)
    if not store.read_records(out):
        return ""
    if earlier is None or not earlier["merged"]:
        return NOT_A_MERGE.format(out=out)
    read.digests[out], read.instants[out] = earlier["settings"], earlier["same_as"]
    read.given = sorted(set(read.given) | set(earlier["merged"])) if all(read.given) else []
    read.runs[out] = earlier
    return ""


def _merge_shards(config: CourseConfig, read: _Shards, out: Path, quiet: bool) -> int:
    """Merge ``read`` into out, saying which shards are missing or did not finish; the exit
    status."""
    merged = read.given if all(read.given) else []
    # Shards whose run did not finish: said, kept in DIR/run.json for the report, until a
    # later merge brings them complete.
    now = {shard: run for shard, run in read.runs.items() if shard != out}
    unfinished = {run["shard"] or str(shard) for shard, run in now.items() if not run["complete"]}
    if out in read.runs:  # an earlier merge's unfinished shards, unless given again now
        unfinished |= set(read.runs[out]["incomplete"]) - {run["shard"] for run in now.values()}
    # The learners an unfinished shard did not reach: a row each, saying so (as grade-class
    # gives its own after a Ctrl-C).
    pending = {
        learner
        for run in now.values()
        if not run["complete"]
        for learner in run["learners"]
        if learner not in read.found
    }
    missing = report_build.missing_shards(merged)
    # The whole roster, from a shard's run.json (versions before 2026-12-02: unknown)
    everyone = next((run["everyone"] for run in read.runs.values() if run["everyone"]), [])
    absent: dict[str, str] = {}
    if missing:
        print(missing, file=sys.stderr)
        absent = _in_missing_shards(everyone, merged, set(read.found) | pending)
    if unfinished:
        print(INCOMPLETE.format(shards=", ".join(sorted(unfinished))), file=sys.stderr)
    roster = next((run["roster"] for run in read.runs.values() if run["roster"]), "")
    settings = next(iter(read.digests.values()), "")
    same_as = next(iter(read.instants.values()), "")
    complete = not (missing or unfinished)
    run = (settings, merged, roster, sorted(unfinished), complete, same_as)
    status = _merge(
        config, read.found, out, quiet, run=run, pending=frozenset(pending), absent=absent,
        everyone=everyone,
    )  # fmt: skip
    return status if complete else EXIT_MISSING_SHARDS


def _options(runs: dict[Path, dict]) -> dict[Path, dict]:
    return {shard: run["options"] for shard, run in runs.items()}


def _recorded_shard(records: list[store.LearnerRecord]) -> str:
    """The "i/n" every record of a folder without run.json names (H48: such a shard, its
    run.json lost, merged alone as a complete class), or "" when they do not agree."""
    shards = {store.shard_label(record.shard) for record in records}
    return shards.pop() if len(shards) == 1 else ""


def _in_missing_shards(everyone: list[str], merged: list[str], known: set[str]) -> dict[str, str]:
    """{learner: their shard "i/n"} for the learners of ``everyone`` (the whole roster) in
    shards this merge was not given, ``known`` aside (H47: they had no row at all, and the
    report counted a class of 14 as 7)."""
    counts = {int(label.split("/")[1]) for label in merged}
    if not everyone or len(counts) != 1:
        return {}
    (count,) = counts
    have = {int(label.split("/")[0]) for label in merged}
    return {
        learner: f"{position % count + 1}/{count}"
        for position, learner in enumerate(sorted(everyone))  # roster.shard's order
        if position % count + 1 not in have and learner not in known
    }


def _run_refusal(runs: dict[Path, dict]) -> str:
    """Why shards of different splits (--shard I/N with another N) or of different rosters
    must not be merged ("" when they may be): H36 merged 2/2 with 1/4, and two classes' shards,
    and was told the class was complete."""
    counts: dict[str, tuple[Path, str]] = {}
    for shard, run in runs.items():
        for label in [run["shard"], *run["merged"]]:
            if label:
                counts.setdefault(label.split("/")[1], (shard, label))
    if len(counts) > 1:
        (first, first_shard), (second, second_shard) = list(counts.values())[:2]
        return OTHER_SPLITS.format(
            first=first, first_shard=first_shard, second=second, second_shard=second_shard
        )
    rosters: dict[str, Path] = {}
    for shard, run in runs.items():
        if run["roster"]:
            rosters.setdefault(run["roster"], shard)
    if len(rosters) > 1:
        first, second = list(rosters.values())[:2]
        return OTHER_ROSTERS.format(first=first, second=second)
    return ""


def _whole_runs(runs: dict[Path, dict]) -> str:
    """WHOLE_RUN when a whole-class run (no --shard) is merged with anything else: it holds
    every learner, and its run.json has no shard to add (H37: merged into an earlier merge, it
    erased the list of shards merged)."""
    whole = [shard for shard, run in runs.items() if not run["shard"] and not run["merged"]]
    return WHOLE_RUN.format(path=whole[0]) if whole and len(runs) > 1 else ""


def _settings_refusal(
    digests: dict[Path, str], instants: dict[Path, str], options: dict[Path, dict] | None = None
) -> str:
    """Why shards graded with different settings must not be merged ("" when they may be).
    ``instants``: their digests with the deadline as an instant (job.instant_settings; "" from
    versions before it): shards that differ only in how the deadline was written may be.
    ``options``: each shard's options as given (run.json), to name what differs."""
    options = options or {}
    known = {shard: digest for shard, digest in digests.items() if digest}
    unknown = [shard for shard, digest in digests.items() if not digest]
    if known and unknown:
        return OLDER.format(old=unknown[0], new=next(iter(known)))
    firsts: dict[str, Path] = {}
    for shard, digest in known.items():
        firsts.setdefault(digest, shard)
    if len(firsts) > 1:
        same = {instants.get(shard, "") for shard in known}
        if len(same) == 1 and "" not in same:
            return ""  # one deadline, written in other words
        first, second = list(firsts.values())[:2]
        what = changed_settings.differences(
            options.get(first, {}), options.get(second, {}), f"in {first}", f"in {second}"
        )
        return MIXED.format(first=first, second=second, what=what or MIXED_UNNAMED)
    return ""


def _merge(
    config: CourseConfig,
    found: dict[str, Path],
    out: Path,
    quiet: bool,
    run: tuple[str, list[str], str, list[str], bool, str],
    pending: frozenset[str] = frozenset(),
    absent: dict[str, str] | None = None,
    everyone: list[str] | None = None,
) -> int:
    """Copy each learner's folder from their shard into out, then the gradebook and report
    (``run``: the shards' settings digest, the shards merged, the roster digest, the shards
    that did not finish, whether the class is complete and the settings digest with the
    deadline as an instant, for DIR/run.json; ``pending``: learners an unfinished shard did not
    reach, each given a "not graded yet" row; ``absent``: the learners of shards not given, by
    their shard, each given a row that says so; ``everyone``: the whole roster, kept in
    DIR/run.json for a later merge into DIR)."""
    settings, merged, roster, unfinished, complete, same_as = run
    store.clear_partial(out)
    store.write_run(
        out,
        "",
        settings,
        merged=merged,
        roster=roster,
        incomplete=unfinished,
        complete=complete,
        same_as=same_as,
        everyone=everyone,
    )
    for learner, shard in sorted(found.items()):
        staged = store.staging_dir(out, learner)
        shutil.rmtree(staged)
        shutil.copytree(store.learner_dir(shard, learner), staged)
        record = store.read_record(shard, learner)
        assert record is not None  # read_records returned it a moment ago, under the lock
        store.commit_learner(out, staged, record)
    carry_from_shards(config, out, found)  # the written answers graded in a shard's formgrader
    absent = absent or {}
    if not pending and not absent:
        return finish(config, out, None, quiet=quiet)
    learners = sorted({r.learner for r in store.read_records(out)} | pending | set(absent))

    def ungraded(learner: str) -> str:
        if learner in absent:
            return SHARD_NOT_GIVEN.format(learner=learner, shard=absent[learner])
        return SHARD_NOT_DONE.format(learner=learner)

    return finish(config, out, learners, quiet=quiet, ungraded=ungraded)


def _error(sentence: str) -> int:
    print(sentence, file=sys.stderr)
    return 2
