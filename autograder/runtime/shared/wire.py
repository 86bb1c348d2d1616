"""The codec for values that cross the trust boundary, in both directions.

A *tree* is what travels: only ``None``, ``bool``, ``int``, ``float``, ``str``, ``bytes``,
``list``, ``tuple`` and ``dict`` (keys ``str`` or ``int``). Every tuple in a tree is a tag whose
first item names what it carries:

    ("tuple", [item, ...])                          a tuple, namedtuple or torch.Size
    ("complex", real, imag)                         a Python complex (pickle would build it)
    ("nd", dtype, shape, data)                      a numpy array (data: native-order bytes)
    ("npscalar", dtype, data)                       a numpy scalar
    ("pt", dtype, shape, data, requires_grad)       a torch tensor (a detached copy)
    ("dtype", name)                                 a torch.dtype, e.g. ("dtype", "float32")
    ("ref", id, "module.QualName", call_label)      an object that stays on the other side

Lists stay lists and dicts stay dicts, so a learner's own tuple can never pass for a tag.
Frames are these trees pickled; ``loads`` unpickles with an unpickler whose ``find_class``
refuses everything, then checks that only the builtins above came out, and no more items than
the frame has bytes (the encoder shares no part, so each item costs a byte; shared lists,
``[[[0] * 1000] * 1000] * 1000`` in 8 KB, would have every walk of the tree take hours).
"""

from __future__ import annotations

import io
import math
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

DEFAULT_MAX_BYTES = 256 * 1024 * 1024
DEFAULT_MAX_DEPTH = 100
#: Frames wrap a value in a few levels of request/response dicts.
FRAME_DEPTH_MARGIN = 8

NUMPY_DTYPES = frozenset(
    ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
    + ["float16", "float32", "float64", "complex64", "complex128"]
)
TORCH_DTYPES: dict[str, torch.dtype] = {
    name: getattr(torch, name)
    for name in sorted(NUMPY_DTYPES | {"bfloat16"})
    if isinstance(getattr(torch, name, None), torch.dtype)
}
_SCALARS = (type(None), bool, int, float, str, bytes)
_SCALAR_SET = frozenset(_SCALARS)
_PLAIN_TENSORS = (torch.Tensor, torch.nn.Parameter)
_TAGS = ("tuple", "complex", "nd", "npscalar", "pt", "dtype", "ref")

Ref = tuple  # ("ref", id, type name, call label)
OnOther = Callable[[Any], Ref]
OnRef = Callable[[int, str, str], Any]


class WireError(ValueError):
    """A value or a frame that cannot cross the boundary; the message is a full sentence."""


class FrameExpands(WireError):
    """A frame of ``nbytes`` bytes whose tree holds more items: parts of it are shared, which
    the encoder never does (a frame learner code forged, to stall the harness)."""

    def __init__(self, nbytes: int) -> None:
        shared = "parts of it are shared, which the grader's encoder never does"
        super().__init__(f"A frame of {nbytes} bytes unpacks to more items; {shared}.")
        self.nbytes = nbytes


def dumps(tree: Any) -> bytes:
    """Pickle a tree (already made of builtins only) into one frame."""
    return pickle.dumps(tree, protocol=5)


class _RefusingUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise WireError(f"A frame tried to build {module}.{name}; frames may hold builtins only.")

    def persistent_load(self, pid: Any) -> Any:
        raise WireError("A frame used a persistent id; frames may hold builtins only.")


def loads(frame: bytes, *, max_depth: int = DEFAULT_MAX_DEPTH + FRAME_DEPTH_MARGIN) -> Any:
    """Unpickle one frame without building any object, and check what came out: builtins of
    the tree's kinds, at most ``max_depth`` levels, ``len(frame)`` items (else FrameExpands)."""
    try:
        tree = _RefusingUnpickler(io.BytesIO(frame)).load()
    except WireError:
        raise
    except Exception as exc:  # a truncated or hand-made frame
        raise WireError(f"A frame could not be read ({type(exc).__name__}: {exc}).") from None
    _check_tree(tree, max_depth, len(frame))
    return tree


def _check_tree(tree: Any, max_depth: int, max_items: int) -> None:
    """Only builtins of the tree's kinds, dict keys str or int, no deeper than max_depth, at
    most max_items items met (a dict's keys count too, a shared part each time). Containers
    alone are stacked (with their depth); scalars are passed over where they are met."""
    if type(tree) in _SCALAR_SET:
        return
    stack, left = [(tree, 0)], max_items
    while stack:
        node, depth = stack.pop()
        if depth >= max_depth:
            raise WireError(f"A frame is nested deeper than {max_depth} levels.")
        kind = type(node)
        left -= len(node) * (2 if kind is dict else 1)
        if left < 0:
            raise FrameExpands(max_items)
        if kind is list or kind is tuple:
            items = node
        elif kind is dict:
            for key in node:
                if type(key) is not str and type(key) is not int:
                    raise WireError(f"A frame holds a dict key of type {type(key).__name__}.")
            items = node.values()
        else:
            raise WireError(f"A frame holds a {kind.__name__}; frames may hold builtins only.")
        for item in items:
            if type(item) not in _SCALAR_SET:
                stack.append((item, depth + 1))


class _Encoder:
    def __init__(self, on_other: OnOther | None, max_bytes: int, max_depth: int) -> None:
        self.on_other = on_other
        self.budget = max_bytes
        self.max_bytes = max_bytes
        self.max_depth = max_depth

    def spend(self, nbytes: int, what: str = "") -> None:
        """Take nbytes from the budget; ``what``: the array or tensor they are, named when it
        alone is too large (its shape is what a learner can act on)."""
        self.budget -= nbytes
        if self.budget < 0:
            limit = f"the {self.max_bytes / 2**20:g} MiB allowed for one value"
            if what and nbytes > self.max_bytes:
                size = math.ceil(nbytes / 2**20 * 10) / 10  # up: never "16 MiB" over 16 MiB
                raise WireError(f"{what} ({size:g} MiB) is larger than {limit}")
            raise WireError(f"the value, all its parts together, is larger than {limit}")

    def encode(self, value: Any, depth: int) -> Any:
        if depth > self.max_depth:
            raise WireError(f"the value is nested more than {self.max_depth} levels deep")
        kind = type(value)
        if kind is int or kind is str or kind is bytes:
            if kind is int:
                cost = NODE + value.bit_length() // 8
            else:
                cost = len(value) if kind is bytes or value.isascii() else 4 * len(value)
                cost = cost if cost > NODE else NODE
            if cost > self.budget:  # named only when it alone is too large
                self.spend(cost, _scalar_text(value) if cost > self.max_bytes else "")
            self.budget -= cost
            return value
        if kind in _SCALARS:
            self.spend(NODE)
            return value
        if kind is complex:
            self.spend(24)
            return ("complex", value.real, value.imag)
        if isinstance(value, torch.Tensor):
            return self.tensor(value)
        if isinstance(value, np.ndarray):
            return self.array(value)
        if isinstance(value, np.generic):
            dtype = _numpy_dtype_name(value.dtype, "a numpy scalar")
            return ("npscalar", dtype, self.array_bytes(np.asarray(value)))
        if isinstance(value, torch.dtype):
            return ("dtype", _torch_dtype_name(value))
        if isinstance(value, list):
            self.spend(CONTAINER)
            return [self.encode(item, depth + 1) for item in value]
        if isinstance(value, tuple):
            self.spend(CONTAINER)
            return ("tuple", [self.encode(item, depth + 1) for item in value])
        if isinstance(value, dict):
            return self.mapping(value, depth)
        if self.on_other is None:
            raise WireError(f"a {_type_name(value)} cannot cross the boundary")
        ref = self.on_other(value)
        self.spend(CONTAINER + sum(len(part) for part in ref if type(part) is str))
        return ref

    def mapping(self, value: dict, depth: int) -> dict:
        self.spend(CONTAINER)
        out = {}
        for key, item in value.items():
            if type(key) not in (str, int):
                raise WireError(
                    f"a dict key must be a str or an int, got {_type_name(key)} {key!r:.60}"
                )
            key = self.encode(key, depth + 1)  # charged as any str or int
            out[key] = self.encode(item, depth + 1)
        return out

    def shape(self, tensor: torch.Tensor) -> tuple[int, ...]:
        """The tensor's shape, checked and charged (a subclass may say what it likes)."""
        try:
            raw = tensor.shape
            shape = tuple(int(n) for n in raw) if len(raw) <= MAX_DIMS else None
        except (TypeError, ValueError, OverflowError):
            shape = None
        if not _valid_shape(shape):
            raise WireError(f"a tensor whose shape is not {MAX_DIMS} sizes or fewer")
        self.spend(NODE * (1 + len(shape)))
        return shape

    def array_bytes(self, array: np.ndarray) -> bytes:
        # numpy's own descriptors: a subclass may redefine nbytes or shape
        shape = tuple(np.ndarray.shape.__get__(array))
        self.spend(np.ndarray.nbytes.__get__(array), f"an array of shape {shape}")
        dtype = np.ndarray.dtype.__get__(array)
        native = np.ascontiguousarray(array, dtype=dtype.newbyteorder("="))
        return native.tobytes()

    def array(self, array: np.ndarray) -> tuple:
        # numpy's own descriptors: a subclass may redefine dtype or shape
        dtype = _numpy_dtype_name(np.ndarray.dtype.__get__(array), "a numpy array")
        shape = tuple(np.ndarray.shape.__get__(array))
        return ("nd", dtype, shape, self.array_bytes(array))

    def tensor(self, tensor: torch.Tensor) -> tuple:
        shape = self.shape(tensor)
        name = _torch_dtype_name(tensor.dtype)
        if name not in TORCH_DTYPES:
            raise WireError(f"a torch tensor of dtype {tensor.dtype} cannot be checked")
        if tensor.layout != torch.strided:
            raise WireError(f"a torch tensor with layout {tensor.layout} cannot be checked")
        if type(tensor) in _PLAIN_TENSORS and name in NUMPY_DTYPES:
            # Most tensors: numpy's tobytes copies them in C order in one step (a third of
            # the time of the general path below); a conjugate or negative view, or a tensor
            # on another device, takes the general path.
            plain = tensor.detach()
            if plain.device.type == "cpu" and not plain.is_conj() and not plain.is_neg():
                self.spend(plain.numel() * plain.element_size(), _tensor_text(shape))
                data = plain.numpy().tobytes()
                return ("pt", name, shape, data, bool(tensor.requires_grad))
        claimed = tensor.numel() * tensor.element_size()  # before the copy (an expanded view)
        self.spend(claimed, _tensor_text(shape))
        flat = tensor.detach().to("cpu").resolve_conj().resolve_neg().contiguous().reshape(-1)
        data = flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""
        self.budget += claimed  # what a subclass claimed, replaced by what it gave
        self.spend(len(data), _tensor_text(shape))
        return ("pt", name, shape, data, bool(tensor.requires_grad))


#: What every part of a value costs at least, in bytes of the budget: what loading and decoding
#: it costs the harness is more than its bytes (an empty dict is about 64 bytes, twice).
NODE = 16
CONTAINER = 4 * NODE  # a list, tuple, dict or reference: decoding one costs most
MAX_DIMS = 64  # numpy's and torch's most dimensions


def _scalar_text(value: str | bytes | int) -> str:
    """What a learner reads of a string, bytes or int too large to cross (its size only)."""
    if type(value) is int:
        return f"an int of {value.bit_length()} bits"
    kind = "a string" if type(value) is str else "a bytes value"
    return f"{kind} of {len(value)} {'characters' if type(value) is str else 'bytes'}"


def _tensor_text(shape: tuple[int, ...]) -> str:
    return f"a tensor of shape {shape}"


def _valid_shape(shape: Any) -> bool:
    """At most MAX_DIMS sizes, each an int from 0 to 2**62 (what numpy and torch can build)."""
    return (
        type(shape) is tuple
        and len(shape) <= MAX_DIMS
        and all(type(n) is int and 0 <= n < 2**62 for n in shape)
    )


def encode(
    value: Any,
    *,
    on_other: OnOther | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> Any:
    """Turn a value into a tree. Objects that are not values go through ``on_other``.

    ``on_other(obj)`` returns a ``("ref", ...)`` tag (the worker registers the object) or raises
    WireError (the harness only sends its own RemoteObjects back). Without it, such objects are
    refused. Raises WireError, whose message completes "the value ...", for object arrays,
    unsupported dtypes, dict keys that are not str or int, too deep or too large values.
    """
    return _Encoder(on_other, max_bytes, max_depth).encode(value, 0)


def decode(tree: Any, *, on_ref: OnRef | None = None, max_depth: int = DEFAULT_MAX_DEPTH) -> Any:
    """Turn a tree back into a value: fresh arrays and tensors that own their memory.

    ``on_ref(id, type_name, call_label)`` resolves a reference; without it references are refused.
    """
    return _decode(tree, on_ref, max_depth, 0)


def _decode(tree: Any, on_ref: OnRef | None, max_depth: int, depth: int) -> Any:
    if depth > max_depth:
        raise WireError(f"A value is nested deeper than {max_depth} levels.")
    kind = type(tree)
    if kind in _SCALARS:
        return tree
    if kind is list:
        return [_decode(item, on_ref, max_depth, depth + 1) for item in tree]
    if kind is dict:
        for key in tree:
            if type(key) not in (str, int):
                raise WireError(f"A value holds a dict key of type {type(key).__name__}.")
        return {key: _decode(item, on_ref, max_depth, depth + 1) for key, item in tree.items()}
    if kind is not tuple or not tree or tree[0] not in _TAGS:
        raise WireError(f"A value holds an untagged {kind.__name__}; the frame is malformed.")
    tag = tree[0]
    if tag == "tuple":
        _expect(tree, 2, list)
        return tuple(_decode(item, on_ref, max_depth, depth + 1) for item in tree[1])
    if tag == "complex":
        if len(tree) != 3 or type(tree[1]) is not float or type(tree[2]) is not float:
            raise WireError("A 'complex' tag is malformed.")
        return complex(tree[1], tree[2])
    if tag == "nd":
        return _decode_array(tree)
    if tag == "npscalar":
        _expect(tree, 3)
        return _decode_array(("nd", tree[1], (), tree[2]))[()]
    if tag == "pt":
        return _decode_tensor(tree)
    if tag == "dtype":
        _expect(tree, 2)
        if tree[1] not in TORCH_DTYPES:
            raise WireError(f"A value names an unknown torch dtype {tree[1]!r}.")
        return TORCH_DTYPES[tree[1]]
    _expect(tree, 4)
    if on_ref is None or type(tree[1]) is not int:
        raise WireError("A value holds a reference where none may appear.")
    return on_ref(tree[1], str(tree[2]), str(tree[3]))


def _expect(tree: tuple, length: int, second: type | None = None) -> None:
    if len(tree) != length or (second is not None and type(tree[1]) is not second):
        raise WireError(f"A {tree[0]!r} tag is malformed.")


def _shape_and_size(shape: Any, itemsize: int, data: Any) -> tuple[int, ...]:
    if not _valid_shape(shape):
        raise WireError(f"A value has an invalid shape {shape!r:.80}.")
    if type(data) is not bytes or len(data) != math.prod(shape) * itemsize:
        raise WireError(f"A value of shape {shape} carries the wrong number of bytes.")
    return shape


def _decode_array(tree: tuple) -> np.ndarray:
    _expect(tree, 4)
    _, dtype, shape, data = tree
    if dtype not in NUMPY_DTYPES:
        raise WireError(f"A value names an unsupported numpy dtype {dtype!r:.40}.")
    np_dtype = np.dtype(dtype)
    shape = _shape_and_size(shape, np_dtype.itemsize, data)
    return np.frombuffer(data, dtype=np_dtype).reshape(shape).copy()


def _decode_tensor(tree: tuple) -> torch.Tensor:
    _expect(tree, 5)
    _, dtype, shape, data, requires_grad = tree
    if dtype not in TORCH_DTYPES:
        raise WireError(f"A value names an unsupported torch dtype {dtype!r:.40}.")
    torch_dtype = TORCH_DTYPES[dtype]
    shape = _shape_and_size(shape, torch_dtype.itemsize, data)
    if data:
        tensor = torch.frombuffer(bytearray(data), dtype=torch_dtype).reshape(shape).clone()
    else:
        tensor = torch.empty(shape, dtype=torch_dtype)
    if requires_grad is True and (torch_dtype.is_floating_point or torch_dtype.is_complex):
        tensor.requires_grad_(True)
    return tensor


def _numpy_dtype_name(dtype: np.dtype, what: str) -> str:
    name = dtype.name
    if name not in NUMPY_DTYPES:
        hint = " (return a numeric array, e.g. float64)" if dtype.kind == "O" else ""
        raise WireError(f"{what} of dtype {name} cannot be checked{hint}")
    return name


def _torch_dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _type_name(value: Any) -> str:
    kind = type(value)
    if kind.__module__ == "builtins":
        return kind.__qualname__
    return f"{kind.__module__}.{kind.__qualname__}"
