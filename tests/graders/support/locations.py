"""Where a known mistake can be fixed: the learner's own line (the scaling, the reshape, the mask
fill), found in their source with `ast`, here in the harness (the text is parsed, never run).

A failure that names a catalogued mistake gets, after the mistake's explanation, "Look at
assignments/t101/attention.py:49, the line that scales the scores." (feedback.locating; the
autouse fixture `learner_lines` sets it for every grader test, visible or hidden: the line is
the learner's own, and says nothing of a hidden test's inputs). Only what the source shows is
said: a mistake whose line cannot be told (its code is elsewhere, or written another way) gets
no place, never a guess.

Each `Place` names a module, the scopes to search in order (a function, a class: all its
methods, or `Class.method`), what to look for (a test on one `ast` node) and how to say it. A
scope whose call the message names (`SelfAttention(8, 4, 6)(x)`) is searched first.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pytest

from autograder.feedback import locating

WHERE = "Look at {path}:{line}, {what}."

Test = Callable[[ast.AST], bool]


@dataclass(frozen=True)
class Place:
    module: str  # "attention": the learner's attention.py
    scopes: tuple[str, ...]  # "scaled_dot_product_attention", "MultiHeadAttention", "A.forward"
    test: Test  # the node to find
    what: str  # "the line that scales the scores"
    last: bool = False  # the last such line rather than the first


# -- tests on one node --------------------------------------------------------------------------


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def calls(*names: str) -> Test:
    """A call of a function or method named one of `names` (np.exp, x.exp, torch.exp: "exp")."""
    return lambda node: isinstance(node, ast.Call) and _name(node) in names


def calls_containing(part: str) -> Test:
    """A call whose function's name holds `part` (self.resid_dropout(...), F.dropout(...))."""
    return lambda node: isinstance(node, ast.Call) and part in _name(node).lower()


def calls_self(*attributes: str) -> Test:
    """A call of one of the module's own submodules: self.W_o(...), self.dropout(...)."""

    def test(node: ast.AST) -> bool:
        func = getattr(node, "func", None)
        return (
            isinstance(node, ast.Call)
            and isinstance(func, ast.Attribute)
            and func.attr in attributes
            and isinstance(func.value, ast.Name)
            and func.value.id == "self"
        )

    return test


def sets_self(*attributes: str, containing: str = "") -> Test:
    """An assignment to self.<attribute> (in __init__: the submodule's creation), or to any
    attribute whose name holds `containing` ("norm": self.norm, self.final_norm, self.ln_f)."""

    def test(node: ast.AST) -> bool:
        if not isinstance(node, ast.Assign | ast.AnnAssign):
            return False
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return any(
            isinstance(t, ast.Attribute)
            and (t.attr in attributes or (containing and containing in t.attr.lower()))
            and isinstance(t.value, ast.Name)
            and t.value.id == "self"
            for t in targets
        )

    return test


def normalises(node: ast.AST) -> bool:
    """A call of a norm (self.norm1(x), self.add_norm_1.norm(x), self.ln_1(x)) that is not an
    AddNorm's own call (self.add_norm_1(x, y))."""
    name = _name(node).lower() if isinstance(node, ast.Call) else ""
    return ("norm" in name or name.startswith("ln")) and not name.startswith("add_norm")


def transposes(node: ast.AST) -> bool:
    """A transpose: .T, .mT, transpose(...), swapaxes(...), permute(...), np.moveaxis(...)."""
    if isinstance(node, ast.Attribute) and node.attr in ("T", "mT"):
        return True
    return calls("transpose", "swapaxes", "permute", "moveaxis", "swapdims")(node)


def scores_product(node: ast.AST) -> bool:
    """Q times K transposed: a matrix product (`@`, matmul, bmm, einsum) holding a transpose,
    or an einsum (whose subscripts do the transpose)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        return any(transposes(n) for n in ast.walk(node.right))
    if calls("matmul", "bmm", "dot")(node):
        return any(transposes(n) for arg in node.args for n in ast.walk(arg))  # type: ignore[attr-defined]
    return calls("einsum")(node)


def scales(node: ast.AST) -> bool:
    """The scaling of the scores: a division or product by a square root (sqrt(...), x ** 0.5),
    a scale attribute, or any division or product of the scores' matrix product itself."""
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Div | ast.Mult):
        node = ast.BinOp(left=node.target, op=node.op, right=node.value)
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div | ast.Mult)):
        return False
    for side in (node.right, node.left):
        for n in ast.walk(side):
            if calls("sqrt", "rsqrt")(n) or scores_product(n):
                return True
            if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow):
                return True
            if isinstance(n, ast.Name | ast.Attribute) and _name(n) in ("scale", "scaling"):
                return True
    return False


def fills_mask(node: ast.AST) -> bool:
    """Where the mask is applied to the scores: where(...), masked_fill(...), a subscript
    assignment through the mask, or the mask added to the scores."""
    if calls("where", "masked_fill", "masked_fill_", "putmask", "copyto")(node):
        return True
    if isinstance(node, ast.Assign) and any(isinstance(t, ast.Subscript) for t in node.targets):
        return _mentions_mask(node.targets[0])
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Mult):
        return _mentions_mask(node.left) or _mentions_mask(node.right)
    return False


def _mentions_mask(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Name) and "mask" in n.id.lower() for n in ast.walk(node))


def reshapes(node: ast.AST) -> bool:
    """A reshape of the heads: view(...), reshape(...), or an einops rearrange(...)."""
    return calls("view", "reshape", "rearrange", "flatten", "unflatten")(node)


def returns(node: ast.AST) -> bool:
    return isinstance(node, ast.Return)


def any_of(*tests: Test) -> Test:
    return lambda node: any(t(node) for t in tests)


SOFTMAX = ("softmax",)
ATTENTION = ("scaled_dot_product_attention", "self_attention", "SelfAttention")
MHA = ("MultiHeadAttention",)
FFN = ("PositionwiseFeedForward",)
ADD_NORM = ("AddNorm",)

PLACES: dict[str, Place] = {
    "softmax/no-max-shift": Place("softmax", SOFTMAX, calls("exp"), "the line that calls exp"),
    "softmax/global-max": Place(
        "softmax", SOFTMAX, calls("max", "amax"), "the line that takes the maximum"
    ),
    "softmax/wrong-axis": Place("softmax", SOFTMAX, calls("sum"), "the line that takes the sum"),
    "softmax/integer-output": Place(
        "softmax",
        SOFTMAX,
        calls("zeros_like", "empty_like", "full_like"),
        "the line that makes the output array",
    ),
    "softmax/nan-all-inf": Place(
        "softmax", SOFTMAX, calls("max", "amax"), "the line that takes the maximum"
    ),
    "attention/no-scale": Place(
        "attention", ATTENTION, scores_product, "the line that computes the scores"
    ),
    "attention/scale-by-d-k": Place(
        "attention", ATTENTION, scales, "the line that scales the scores"
    ),
    "attention/scale-by-d-v": Place(
        "attention", ATTENTION, scales, "the line that scales the scores"
    ),
    "attention/scale-by-d-model": Place(
        "attention", ATTENTION, scales, "the line that scales the scores"
    ),
    "attention/softmax-over-queries": Place(
        "attention", ATTENTION, calls("softmax"), "the line that calls the softmax"
    ),
    "attention/k-transposed-all-axes": Place(
        "attention", ATTENTION, transposes, "the line that transposes K"
    ),
    "attention/k-transpose-fixed-axes": Place(
        "attention", ATTENTION, transposes, "the line that transposes K"
    ),
    "attention/mask-fill-zero": Place(
        "attention", ATTENTION, fills_mask, "the line that applies the mask"
    ),
    "attention/mask-fill-small-negative": Place(
        "attention", ATTENTION, fills_mask, "the line that applies the mask"
    ),
    "attention/mask-inverted": Place(
        "attention", ATTENTION, fills_mask, "the line that applies the mask"
    ),
    "attention/padding-over-queries": Place(
        "attention", ATTENTION, fills_mask, "the line that applies the mask"
    ),
    "attention/blank-row-uniform": Place(
        "attention", ATTENTION, fills_mask, "the line that applies the mask"
    ),
    "attention/mask-after-softmax": Place(
        "attention", ATTENTION, fills_mask, "the line that applies the mask"
    ),
    "attention/mask-ignored": Place(
        "attention", ATTENTION, calls("softmax"), "the softmax the mask must come before"
    ),
    "multi_head_attention/split-without-transpose": Place(
        "multi_head_attention", MHA, reshapes, "the line that splits the heads"
    ),
    "multi_head_attention/merge-without-transpose": Place(
        "multi_head_attention", MHA, reshapes, "the line that merges the heads", last=True
    ),
    "multi_head_attention/kv-from-query": Place(
        "multi_head_attention",
        MHA,
        calls_self("W_k", "W_v"),
        "the line that projects the keys or values",
    ),
    "multi_head_attention/no-output-projection": Place(
        "multi_head_attention", ("MultiHeadAttention.forward",), returns, "the return line"
    ),
    "multi_head_attention/scale-by-d-model": Place(
        "multi_head_attention", MHA, scales, "the line that scales the scores"
    ),
    "multi_head_attention/no-scale": Place(
        "multi_head_attention", MHA, scores_product, "the line that computes the scores"
    ),
    "multi_head_attention/averaged-weights": Place(
        "multi_head_attention", MHA, calls("mean"), "the line that averages the weights"
    ),
    "multi_head_attention/mask-inverted": Place(
        "multi_head_attention", MHA, fills_mask, "the line that applies the mask"
    ),
    "multi_head_attention/mask-no-head-axis": Place(
        "multi_head_attention", MHA, fills_mask, "the line that applies the mask"
    ),
    "multi_head_attention/mask-head-axis-always": Place(
        "multi_head_attention",
        MHA,
        calls("unsqueeze", "expand_dims"),
        "the line that adds the head axis",
    ),
    "multi_head_attention/fully-masked-query": Place(
        "multi_head_attention", MHA, fills_mask, "the line that applies the mask"
    ),
    "multi_head_attention/dropout-in-eval": Place(
        "multi_head_attention", MHA, calls("dropout"), "the line that applies the dropout"
    ),
    "multi_head_attention/dropout-on-output": Place(
        "multi_head_attention",
        ("MultiHeadAttention.forward",),
        calls_containing("dropout"),
        "the line of the dropout",
        last=True,
    ),
    "multi_head_attention/dropout-missing": Place(
        "multi_head_attention", MHA, calls("softmax"), "the softmax the dropout must follow"
    ),
    "multi_head_attention/indivisible-not-refused": Place(
        "multi_head_attention",
        ("MultiHeadAttention.__init__",),
        lambda node: isinstance(node, ast.Assert),
        "the assert",
    ),
    "multi_head_attention/weights-before-dropout": Place(
        "multi_head_attention", ("MultiHeadAttention.forward",), returns, "the return line"
    ),
    "multi_head_attention/bias-ignored": Place(
        "multi_head_attention",
        ("MultiHeadAttention.__init__",),
        calls("Linear"),
        "the line that creates the first projection",
    ),
    "multi_head_attention/add-norm-inside": Place(
        "multi_head_attention",
        MHA,
        calls("LayerNorm", "layer_norm"),
        "the line of the LayerNorm",
    ),
    "multi_head_attention/float32-inside": Place(
        "multi_head_attention",
        MHA,
        calls("FloatTensor", "tensor", "float32"),
        "the line that makes a float32 tensor",
    ),
    "feed_forward/no-relu": Place(
        "feed_forward", ("PositionwiseFeedForward.forward",), calls_self("W_1"), "the line of W_1"
    ),
    "feed_forward/relu-after-second-linear": Place(
        "feed_forward", FFN, calls("relu"), "the line of the ReLU"
    ),
    "feed_forward/gelu": Place("feed_forward", FFN, calls("gelu", "GELU"), "the line of the GELU"),
    "feed_forward/residual-inside": Place(
        "feed_forward", ("PositionwiseFeedForward.forward",), returns, "the return line"
    ),
    "feed_forward/dropout-after-second-linear": Place(
        "feed_forward", FFN, calls("dropout", "Dropout"), "the line of the dropout", last=True
    ),
    "feed_forward/dropout-missing": Place(
        "feed_forward", ("PositionwiseFeedForward.forward",), calls_self("W_2"), "the line of W_2"
    ),
    "feed_forward/add-norm-inside": Place(
        "feed_forward", FFN, calls("LayerNorm", "layer_norm"), "the line of the LayerNorm"
    ),
    "add_norm/pre-norm": Place("add_norm", ("AddNorm.forward",), returns, "the return line"),
    "add_norm/no-residual": Place("add_norm", ("AddNorm.forward",), returns, "the return line"),
    "add_norm/no-sublayer": Place("add_norm", ("AddNorm.forward",), returns, "the return line"),
    "add_norm/no-norm": Place("add_norm", ("AddNorm.forward",), returns, "the return line"),
    "add_norm/dropout-in-eval": Place(
        "add_norm", ADD_NORM, calls("dropout"), "the line that applies the dropout"
    ),
    "add_norm/dropout-after-norm": Place(
        "add_norm", ("AddNorm.forward",), returns, "the return line"
    ),
    "add_norm/eps-ignored": Place(
        "add_norm", ("AddNorm.__init__",), sets_self("norm"), "the line that creates the norm"
    ),
    "add_norm/custom-layer-norm": Place(
        "add_norm", ("AddNorm.__init__",), sets_self("norm"), "the line that creates the norm"
    ),
    "add_norm/unbiased-variance": Place(
        "add_norm", ADD_NORM, calls("std", "var"), "the line that takes the deviation"
    ),
    "add_norm/eps-outside-sqrt": Place(
        "add_norm", ADD_NORM, calls("std", "sqrt"), "the line that takes the deviation"
    ),
    "encoder/second-residual-from-input": Place(
        "encoder", ("EncoderLayer.forward",), calls_self("add_norm_2"), "the line of add_norm_2"
    ),
    "encoder/feed-forward-on-input": Place(
        "encoder", ("EncoderLayer.forward",), calls_self("feed_forward"), "the feed-forward line"
    ),
    "encoder/first-add-norm-skipped": Place(
        "encoder", ("EncoderLayer.forward",), calls_self("self_attn"), "the self-attention line"
    ),
    "encoder/feed-forward-skipped": Place(
        "encoder", ("EncoderLayer.forward",), returns, "the return line"
    ),
    "encoder/norms-swapped": Place(
        "encoder", ("EncoderLayer.forward",), calls_self("add_norm_2"), "the line of add_norm_2"
    ),
    "encoder/mask-not-passed": Place(
        "encoder", ("EncoderLayer.forward",), calls_self("self_attn"), "the self-attention line"
    ),
    "encoder/pre-norm": Place(
        "encoder", ("EncoderLayer.forward",), normalises, "the line that normalises first"
    ),
    "encoder/shared-layer": Place(
        "encoder", ("Encoder.__init__",), sets_self("layers"), "the line that makes the layers"
    ),
    "encoder/layers-read-input": Place(
        "encoder", ("Encoder.forward",), calls("layer"), "the line that calls a layer"
    ),
    "encoder/stack-mask-not-passed": Place(
        "encoder", ("Encoder.forward",), calls("layer"), "the line that calls a layer"
    ),
    "encoder/only-first-layer": Place("encoder", ("Encoder.forward",), returns, "the return line"),
    "encoder/layers-reversed": Place(
        "encoder",
        ("Encoder.forward",),
        lambda node: isinstance(node, ast.For),
        "the loop over the layers",
    ),
    "encoder/final-norm": Place(
        "encoder",
        ("Encoder.__init__",),
        sets_self(containing="norm"),
        "the line that creates the final norm",
    ),
}


# -- finding the line --------------------------------------------------------------------------


@lru_cache(maxsize=64)
def _tree(path: str, stamp: tuple[int, int]) -> ast.Module | None:
    try:
        return ast.parse(Path(path).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return None


def _scopes(tree: ast.Module, scope: str) -> Iterator[ast.AST]:
    """The definitions `scope` names: a top-level function or class, or `Class.method`."""
    head, _, method = scope.partition(".")
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == head:
            if not method:
                yield node
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and item.name == method:
                        yield item


def _lines(scope: ast.AST, test: Test) -> list[int]:
    """The lines of the nodes in scope (its docstrings and def lines aside) that pass test."""
    found = []
    for node in ast.walk(scope):
        if isinstance(node, ast.FunctionDef | ast.ClassDef | ast.arguments | ast.arg):
            continue
        if getattr(node, "lineno", None) is None:
            continue
        try:
            hit = test(node)
        except Exception:  # a test on an unusual node: no place, never a grader error
            hit = False
        if hit:
            found.append(node.lineno)
    return sorted(found)


def _referenced(tree: ast.Module, scope: ast.AST) -> list[ast.AST]:
    """The module's own functions and classes that `scope` names (a helper it calls, a class
    it builds: the Annotated Transformer's `attention(...)`, a LayerNorm class of one's own),
    in the order it first names them."""
    defined = {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and node is not scope
    }
    found: dict[str, ast.AST] = {}
    for node in ast.walk(scope):
        name = node.id if isinstance(node, ast.Name) else ""
        if name in defined and name not in found:
            found[name] = defined[name]
    return list(found.values())


def _line(tree: ast.Module, place: Place, message: str) -> int | None:
    """The line of the first (or last) node passing place.test in the scopes the message
    names (`SelfAttention(8, 4, 6)(x)`: SelfAttention), or in all place.scopes in order when it
    names none; each scope's own module-level helpers after it."""
    named = [s for s in place.scopes if f"{s.partition('.')[0]}(" in message]
    for scope_name in named or place.scopes:
        for scope in _scopes(tree, scope_name):
            for searched in (scope, *_referenced(tree, scope)):
                lines = _lines(searched, place.test)
                if lines:
                    return lines[-1] if place.last else lines[0]
    return None


def place_of(mistake_id: str, message: str, package_dir: Path, shown_dir: str) -> str | None:
    """WHERE for a named mistake in the learner's package, or None when its line cannot be
    told from the source."""
    place = PLACES.get(mistake_id)
    if place is None:
        return None
    path = Path(package_dir) / f"{place.module}.py"
    try:
        stat = path.stat()
    except OSError:
        return None
    tree = _tree(str(path), (stat.st_mtime_ns, stat.st_size))
    line = _line(tree, place, message) if tree is not None else None
    if line is None:
        return None
    shown = f"{shown_dir.rstrip('/')}/{place.module}.py"
    return WHERE.format(path=shown, line=line, what=place.what)


@pytest.fixture(autouse=True)
def learner_lines(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every grader test: a named mistake points to the learner's line (module docstring)."""
    if "learner" not in request.fixturenames:
        yield
        return
    learner = request.getfixturevalue("learner")
    package_dir, shown = learner.package_dir, learner.display_dir

    def locate(mistake_id: str, message: str) -> str | None:
        return place_of(mistake_id, message, package_dir, shown)

    with locating(locate):
        yield
