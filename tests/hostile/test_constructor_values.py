"""A learner class whose constructor gives no instance of it (``__new__`` returning 42 or None).

The graders then called ``.load_state_dict`` or ``parameters`` on a plain number: 20 grader
errors for one learner. The constructor call itself is now the learner's failure.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from autograder.runtime import LearnerError

from .toy_session import toy_module

TOY = """
from torch import nn


class Number(nn.Module):
    def __new__(cls, *args, **kwargs):
        return 42


class Nothing(nn.Module):
    def __new__(cls, *args, **kwargs):
        return None


class Fine(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(2, 2)

    def forward(self, x):
        return x
"""


@pytest.fixture
def layers(tmp_path: Path):
    with toy_module(tmp_path, TOY) as module:
        yield module


@pytest.mark.parametrize(("name", "got"), [("Number", "an int"), ("Nothing", "None")])
@pytest.mark.parametrize("fused", [True, False], ids=["build", "call"])
def test_a_constructor_that_gives_no_instance_is_the_learners_failure(layers, name, got, fused):
    cls = getattr(layers, name)
    with pytest.raises(LearnerError) as info:  # not an AttributeError in the grader
        cls.build(state={}) if fused else cls(3)
    assert info.value.kind == "bad_return"
    assert info.value.feedback.startswith(f"{name}(...) gave {got}, not an object of its class")
    assert "\n" not in info.value.feedback and "Traceback" not in info.value.feedback
    fine = layers.Fine.build(state={"proj.weight": torch.eye(2), "proj.bias": torch.zeros(2)})
    x = torch.ones(1, 2)
    assert torch.equal(fine(x), x)  # the same worker goes on


def test_parameters_of_a_plain_value_name_it_as_the_learners(layers):
    """A part that is None (an encoder whose layers hold None) read as a module by a grader."""
    session = layers._session
    with pytest.raises(LearnerError) as info:
        session.parameters(None)
    assert info.value.feedback.startswith(
        "The grader expected a torch.nn.Module here, but your code gave None"
    )
