"""The codec of the trust boundary: what round-trips, and what is refused."""

from __future__ import annotations

import collections
import pickle
from fractions import Fraction

import numpy as np
import pytest
import torch

from autograder.runtime.harness import failures
from autograder.runtime.shared import wire
from autograder.runtime.worker import learner_objects


def roundtrip(value, **kwargs):
    return wire.decode(wire.loads(wire.dumps(wire.encode(value, **kwargs))))


def test_builtin_scalars_and_containers_roundtrip_exactly():
    value = {
        "none": None,
        "flags": [True, False],
        "numbers": (0, -(2**70), 1.5, float("inf"), 2 - 3j),
        "text": "héllo\n",
        "raw": b"\x00\xff",
        7: [[], (), {}],
    }
    got = roundtrip(value)
    assert got == value
    assert type(got["numbers"]) is tuple and type(got[7][1]) is tuple
    assert type(got["flags"][0]) is bool


def test_learner_tuples_cannot_pass_for_tags():
    value = ("nd", "float64", (1,), b"\x00" * 8)
    assert roundtrip(value) == value
    assert roundtrip(["ref", 1, "x", "y"]) == ["ref", 1, "x", "y"]


@pytest.mark.parametrize("dtype", sorted(wire.NUMPY_DTYPES))
def test_numpy_arrays_keep_dtype_shape_and_values(dtype):
    source = (np.arange(24) % 7).reshape(2, 3, 4).astype(dtype)
    got = roundtrip(source)
    assert got.dtype == source.dtype and got.shape == (2, 3, 4)
    np.testing.assert_array_equal(got, source)
    assert got.flags.owndata and got.flags.writeable


def test_numpy_views_and_foreign_byte_order_are_copied_as_values():
    base = np.arange(30, dtype=np.float64).reshape(5, 6)
    view = base[::2, 1::2].T
    np.testing.assert_array_equal(roundtrip(view), view)
    swapped = np.arange(4, dtype=">i4")
    got = roundtrip(swapped)
    assert got.dtype == np.dtype("int32") and got.tolist() == [0, 1, 2, 3]
    empty = np.zeros((0, 3), dtype=np.float32)
    assert roundtrip(empty).shape == (0, 3)


def test_numpy_scalars_stay_numpy_scalars():
    for scalar in (np.float32(1.25), np.int8(-3), np.bool_(True), np.complex64(1 + 2j)):
        got = roundtrip(scalar)
        assert type(got) is type(scalar) and got == scalar


@pytest.mark.parametrize("dtype", sorted(wire.TORCH_DTYPES))
def test_torch_tensors_keep_dtype_shape_and_values(dtype):
    source = (torch.arange(12) % 5).reshape(3, 4).to(wire.TORCH_DTYPES[dtype])
    got = roundtrip(source)
    assert got.dtype == source.dtype and got.shape == source.shape
    assert torch.equal(got, source)


@pytest.mark.parametrize("dtype", ["float32", "complex64", "int64", "bool", "bfloat16"])
def test_views_travel_as_their_values_in_c_order(dtype):
    base = (torch.arange(60) % 7).reshape(3, 4, 5).to(wire.TORCH_DTYPES[dtype])
    views = [base.transpose(0, 2), base[:, ::2], base.expand(2, 3, 4, 5), base[1], base[0, 0, 0]]
    if base.is_complex():
        views += [base.conj(), base.conj().transpose(0, 1)]
    if base.is_floating_point():
        views += [torch.nn.Parameter(base.clone()), base._neg_view()]
    for view in views:
        tree = wire.encode(view)
        expected = view.detach().resolve_conj().resolve_neg().contiguous()
        assert tree[2] == tuple(view.shape)
        assert len(tree[3]) == expected.numel() * expected.element_size()
        assert torch.equal(wire.decode(tree), expected)


def test_decoded_tensors_own_their_memory_and_keep_requires_grad():
    weight = torch.nn.Parameter(torch.randn(3, 4))
    got = roundtrip(weight.t())  # a non-contiguous view with a grad_fn
    assert torch.equal(got, weight.detach().t())
    assert got.requires_grad and got.is_leaf and got.grad_fn is None
    assert got.is_contiguous() and got.untyped_storage().nbytes() == 3 * 4 * 4
    assert not roundtrip(torch.ones(2)).requires_grad
    assert roundtrip(torch.zeros(0, 5)).shape == (0, 5)
    assert roundtrip(torch.tensor(3.5)).item() == 3.5


def test_sizes_dtypes_and_namedtuples_become_plain_values():
    Point = collections.namedtuple("Point", "x y")
    got = roundtrip([torch.Size([2, 3]), torch.bfloat16, Point(1, 2)])
    assert got == [(2, 3), torch.bfloat16, (1, 2)]
    assert type(got[0]) is tuple and type(got[2]) is tuple


def test_ordered_dicts_such_as_state_dicts_become_dicts():
    state = torch.nn.Linear(2, 3).state_dict()
    got = roundtrip(state)
    assert list(got) == ["weight", "bias"]
    assert torch.equal(got["weight"], state["weight"])


def test_objects_travel_as_references_through_the_hooks():
    module = torch.nn.Linear(2, 2)
    registry = {}

    def on_other(obj):
        registry[len(registry) + 1] = obj
        return ("ref", len(registry), "torch.nn.Linear", "Linear.forward")

    tree = wire.encode({"m": module, "n": 1}, on_other=on_other)
    assert tree["m"] == ("ref", 1, "torch.nn.Linear", "Linear.forward")
    got = wire.decode(tree, on_ref=lambda ref_id, type_name, label: registry[ref_id])
    assert got["m"] is module
    with pytest.raises(wire.WireError, match="reference"):
        wire.decode(tree)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (np.array([1, "a"], dtype=object), "dtype object cannot be checked"),
        (np.array(["ab"]), "dtype str"),
        (np.zeros(2, dtype="datetime64[s]"), "dtype datetime64"),
        ({(1, 2): 3}, "dict key must be a str or an int"),
        ({1.5: 3}, "dict key must be a str or an int"),
        (object(), "cannot cross the boundary"),
        ({1, 2}, "cannot cross the boundary"),
    ],
)
def test_values_that_cannot_be_checked_are_refused_with_a_reason(value, reason):
    with pytest.raises(wire.WireError, match=reason):
        wire.encode(value)


def test_object_arrays_are_refused_with_advice():
    with pytest.raises(wire.WireError) as info:
        wire.encode([np.array([None])])
    assert "return a numeric array" in str(info.value)


def test_nesting_and_size_limits_are_enforced():
    deep: list = []
    for _ in range(30):
        deep = [deep]
    assert roundtrip(deep, max_depth=31) == deep
    with pytest.raises(wire.WireError, match="nested more than 20 levels"):
        wire.encode(deep, max_depth=20)
    cyclic: list = []
    cyclic.append(cyclic)
    with pytest.raises(wire.WireError, match="nested"):
        wire.encode(cyclic)
    with pytest.raises(wire.WireError, match="larger than"):
        wire.encode(np.zeros(1000), max_bytes=4000)
    assert wire.encode(np.zeros(1000), max_bytes=9000)[0] == "nd"
    with pytest.raises(wire.WireError, match="deeper than 5"):
        wire.loads(wire.dumps(deep), max_depth=5)


def test_an_array_too_large_to_cross_is_named_by_its_shape_before_it_is_copied():
    """The learner reads the shape of what they returned; a broadcast view (8 GiB as a copy,
    a few bytes in memory) is refused before the copy is made."""
    mib = 2**20
    with pytest.raises(wire.WireError) as caught:
        wire.encode(np.broadcast_to(np.float64(0), (2**30,)), max_bytes=16 * mib)
    assert str(caught.value) == (
        "an array of shape (1073741824,) (8192 MiB) is larger than the 16 MiB allowed for one value"
    )
    with pytest.raises(wire.WireError) as caught:
        wire.encode(torch.zeros(1).expand(3, 2**20), max_bytes=8 * mib)
    assert str(caught.value) == (
        "a tensor of shape (3, 1048576) (12 MiB) is larger than the 8 MiB allowed for one value"
    )
    with pytest.raises(wire.WireError) as caught:  # many small ones: no one array to blame
        wire.encode([np.zeros(2**16)] * 20, max_bytes=8 * mib)
    assert str(caught.value) == (
        "the value, all its parts together, is larger than the 8 MiB allowed for one value"
    )


class Exploit:
    def __reduce__(self):
        return (print, ("this must never run",))


@pytest.mark.parametrize(
    "payload",
    [
        Fraction(1, 2),
        Exploit(),
        [1, {"a": np.float64(1.0)}],
        {"op": "call", "args": [torch.ones(1)]},
    ],
)
def test_frames_holding_pickled_objects_are_refused(payload, capsys):
    frame = pickle.dumps(payload)
    with pytest.raises(wire.WireError, match="builtins only"):
        wire.loads(frame)
    assert "must never run" not in capsys.readouterr().out


@pytest.mark.parametrize("payload", [{1, 2}, frozenset([1]), bytearray(b"x"), [1, {2: {3}}]])
def test_frames_holding_other_builtin_types_are_refused(payload):
    with pytest.raises(wire.WireError, match="builtins only"):
        wire.loads(pickle.dumps(payload, protocol=5))


@pytest.mark.parametrize("key", [1.5, (1, 2), None, b"k"])
def test_frames_with_other_dict_keys_are_refused_at_any_depth(key):
    for payload in ({key: 1}, [0, ("x", [{"a": {key: "v"}}])]):
        with pytest.raises(wire.WireError, match=f"dict key of type {type(key).__name__}"):
            wire.loads(pickle.dumps(payload, protocol=5))


def test_depth_counts_dicts_lists_and_tuples_alike():
    tree: object = "leaf"
    for level in range(12):
        tree = [{"k": ("t", tree)}][0] if level % 2 else ("t", [tree])
    assert wire.loads(wire.dumps(tree), max_depth=25) == tree
    with pytest.raises(wire.WireError, match="deeper than 17"):
        wire.loads(wire.dumps(tree), max_depth=17)


def test_truncated_frames_and_malformed_tags_are_refused():
    frame = wire.dumps(wire.encode(np.arange(10)))
    with pytest.raises(wire.WireError, match="could not be read"):
        wire.loads(frame[:-5])
    bad_trees = [
        ("nd", "float64", (3,), b"\x00" * 8),  # wrong byte count
        ("nd", "object", (1,), b"\x00" * 8),
        ("pt", "float64", (-1,), b"", False),
        ("dtype", "Tensor"),
        ("tuple", "not a list"),
        ("unknown", 1),
        (),
    ]
    for tree in bad_trees:
        with pytest.raises(wire.WireError):
            wire.decode(tree)


class _LyingArray(np.ndarray):
    @property
    def nbytes(self):  # type: ignore[override]
        return 0


@pytest.mark.parametrize(
    "value",
    [
        "\U0001f600" * 2**20,  # 1 Mi characters, 4 MiB of UTF-8
        {"a" * 3 * 2**20: 1},  # a dict key
        1 << (8 * 3 * 2**20),  # a 3 MiB int
        [{}] * 200_000,  # many empty parts: each costs the harness more than its bytes
        [""] * 200_000,
        np.zeros(2**19).view(_LyingArray),  # a subclass that says it is empty
    ],
    ids=["non_ascii", "dict_key", "huge_int", "empty_dicts", "empty_strings", "lying_array"],
)
def test_every_part_of_a_value_is_charged_at_least_what_it_costs(value):
    """H41: values the budget undercounted reached the harness as frames over its limit, which it
    took for the worker's death (a 5 s wait, 'killed by SIGKILL' for the learner), or as
    millions of empty parts costing it a gigabyte. Each is now refused in the worker."""
    with pytest.raises(wire.WireError, match="allowed for one value"):
        wire.encode(value, max_bytes=2 * 2**20)


def test_a_value_within_the_budget_makes_a_frame_within_it():
    """The harness reads frames up to three budgets (client.py): what the budget lets through
    must stay well under that."""
    budget = 2**20
    for value in (
        ["x" * 100] * 10_000,
        list(range(60_000)),
        {str(i): [i, float(i)] for i in range(5_000)},
        [np.zeros(4)] * 2_000,
    ):
        frame = wire.dumps(wire.encode(value, max_bytes=budget))
        assert len(frame) < budget, len(frame)


class _ManyDims(torch.Tensor):
    @property
    def shape(self):  # type: ignore[override]
        return (0,) * 70


class _ShapeLie(np.ndarray):
    @property
    def shape(self):  # type: ignore[override]
        return (0,) * 70

    @property
    def dtype(self):  # type: ignore[override]
        return np.dtype("int8")


def test_a_subclass_cannot_lie_about_its_shape_or_dtype():
    """H42: a tensor subclass claiming 20 million dimensions took `grade` to 4 minutes and
    3.5 GB; an ndarray subclass claiming 70 made every test 'the grader itself failed'."""
    with pytest.raises(wire.WireError, match="a tensor whose shape is not 64 sizes or fewer"):
        wire.encode(torch.zeros(0).as_subclass(_ManyDims))
    array = np.arange(6.0).reshape(2, 3).view(_ShapeLie)
    back = roundtrip(array)
    assert back.shape == (2, 3) and back.dtype == np.float64
    assert back.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    with pytest.raises(wire.WireError, match="invalid shape"):  # a forged frame, in the harness
        wire.decode(("nd", "float64", (0,) * 70, b""))
    with pytest.raises(wire.WireError, match="invalid shape"):
        wire.decode(("pt", "float32", (2**70, 0), b"", False))


def test_a_value_the_harness_cannot_rebuild_is_the_learners_mistake():
    error = failures.unreadable("f(...)", wire.WireError("A value has an invalid shape (1,)."))
    assert (error.kind, error.feedback) == (
        "bad_return",
        "f(...) returned a value the grader cannot read: a value has an invalid shape (1,).",
    )


def test_names_learner_code_chose_are_capped():
    """A class whose __qualname__ was 30 million characters filled grader.log and junit.xml."""
    assert len(learner_objects.capped("Q" * 30_000_000)) == 200
    assert learner_objects.capped("MultiHeadAttention") == "MultiHeadAttention"


def _shared(levels: int) -> list:
    level: list = [0] * 1000
    for _ in range(levels):
        level = [level] * 1000
    return level


@pytest.mark.parametrize("levels", [1, 2, 3])
def test_a_frame_whose_parts_are_shared_is_refused_before_it_is_walked(levels):
    frame = pickle.dumps({"ok": True, "value": _shared(levels)}, protocol=5)
    assert len(frame) < 20_000  # 1000**(levels + 1) items: levels 3 would take hours to walk
    with pytest.raises(
        wire.FrameExpands, match=f"A frame of {len(frame)} bytes unpacks to more items"
    ):
        wire.loads(frame)
    shared_dict = {"a": [1, 2, 3] * 10}
    frame = pickle.dumps([shared_dict] * 1000, protocol=5)  # dicts count their keys too
    with pytest.raises(wire.FrameExpands):
        wire.loads(frame)


@pytest.mark.parametrize(
    "value",
    [
        [None] * 5000,
        [()] * 500,
        [np.zeros(())] * 300,
        [np.zeros(0)] * 300,
        [torch.zeros(0)] * 300,
        [torch.float32] * 300,
        {i: True for i in range(2000)},
        [[]] * 500,
        [""] * 500,
        [np.float32(1)] * 300,
    ],
    ids=lambda value: f"{type(next(iter(value)))}",
)
def test_a_frame_the_encoder_made_never_holds_more_items_than_bytes(value):
    """The encoder shares nothing (an empty tuple, shared by Python itself, has no items)."""
    frame = wire.dumps({"ok": True, "value": wire.encode(value), "seq": 1, "forbidden": []})
    assert len(wire.decode(wire.loads(frame)["value"])) == len(value)
