"""The time left of a batch (progress/time_left.py), on a fake clock: honest while one slow
learner (kofi's infinite loop) runs on after the others are done."""

from __future__ import annotations

import pytest

from autograder.progress.time_left import TimeLeft


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _class_of_twelve(clock: Clock) -> TimeLeft:
    """Eleven learners of 2 s each done, two at a time; kofi started at the end."""
    left = TimeLeft(total=12, jobs=2, clock=clock)
    for _ in range(11):
        clock.now += 2.0
        left.finished(clock.now - 2.0)
    return left


def test_nothing_is_known_before_a_learner_of_this_run_is_done():
    clock = Clock()
    left = TimeLeft(total=4, jobs=2, clock=clock)
    clock.now += 30.0
    assert left.seconds(done=0, running={"ada": 100.0, "bo": 100.0}) is None


def test_the_learners_waiting_are_spread_over_the_jobs():
    clock = Clock()
    left = TimeLeft(total=10, jobs=2, clock=clock)
    for duration in (2.0, 4.0):
        left.finished(clock.now - duration)
    # 2 done (mean 3 s), 8 waiting, nobody running: 8 x 3 s over 2 jobs
    assert left.seconds(done=2, running={}) == pytest.approx(12.0)


def test_a_learner_running_is_expected_to_take_what_the_longer_ones_took():
    clock = Clock()
    left = TimeLeft(total=3, jobs=2, clock=clock)
    for duration in (1.0, 4.0):
        left.finished(clock.now - duration)
    # cy has run 2 s: of the durations, only 4 s is as long, so 2 s more
    assert left.seconds(done=2, running={"cy": clock.now - 2.0}) == pytest.approx(2.0)


def test_one_slow_learner_left_makes_the_time_left_unknown_not_a_stale_rate():
    clock = Clock()
    left = _class_of_twelve(clock)
    kofi = {"kofi": clock.now}
    clock.now += 1.0
    assert left.seconds(done=11, running=kofi) == pytest.approx(1.0)  # like the others so far
    clock.now += 1.5
    assert left.seconds(done=11, running=kofi) is None  # longer than any: nobody knows
    clock.now += 30.0
    assert left.seconds(done=11, running=kofi) is None


def test_a_class_all_done_has_no_time_left():
    clock = Clock()
    left = _class_of_twelve(clock)
    left.finished(clock.now - 40.0)
    assert left.seconds(done=12, running={}) == 0.0
