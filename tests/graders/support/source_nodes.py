"""What a mistake's line looks like in a learner's source: a `Place` (the module, the scopes to
search, a test on one `ast` node, how to say it) and the tests on one node it is built from (a
call of `exp`, a reshape, a mask fill...). support.mistake_places holds the course's table of
them; support.locations finds the line.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

Test = Callable[[ast.AST], bool]


@dataclass(frozen=True)
class Place:
    module: str  # "attention": the learner's attention.py
    scopes: tuple[str, ...]  # "scaled_dot_product_attention", "MultiHeadAttention", "A.forward"
    test: Test  # the node to find
    what: str  # "the line that scales the scores"
    last: bool = False  # the last such line rather than the first


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
