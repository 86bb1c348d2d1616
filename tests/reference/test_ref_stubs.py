"""The learner stubs match the references: same names, signatures and docstrings, and every
public callable raises NotImplementedError naming its component.

The stubs are loaded as a private package (`_t101_stubs`) so they never shadow the references'
`t101`; their relative imports work under any package name.
"""

import importlib.util
import inspect
import sys
from pathlib import Path

import pytest
import t101
from t101 import add_norm, attention, encoder, feed_forward, multi_head_attention, softmax

ASSIGNMENTS = Path(__file__).resolve().parents[2] / "assignments"
MODULES = {
    "softmax": softmax,
    "attention": attention,
    "multi_head_attention": multi_head_attention,
    "feed_forward": feed_forward,
    "add_norm": add_norm,
    "encoder": encoder,
}
TITLES = {
    "softmax": "Softmax",
    "attention": "Scaled dot-product attention",
    "multi_head_attention": "Multi-head attention",
    "feed_forward": "Position-wise feed-forward",
    "add_norm": "Add & Norm",
    "encoder": "Encoder layer and stack",
}
# A call that reaches the stub's body for each public name (arguments are never inspected).
CALLS = {
    "softmax": lambda m: m.softmax([1.0, 2.0]),
    "scaled_dot_product_attention": lambda m: m.scaled_dot_product_attention(1, 1, 1),
    "self_attention": lambda m: m.self_attention(1, 1, 1, 1),
    "cosine_similarity": lambda m: m.cosine_similarity(1, 1),
    "SelfAttention": lambda m: m.SelfAttention(4),
    "SelfAttention.forward": lambda m: m.SelfAttention.forward(None, 1),
    "MultiHeadAttention": lambda m: m.MultiHeadAttention(4, 2),
    "MultiHeadAttention.forward": lambda m: m.MultiHeadAttention.forward(None, 1, 1, 1),
    "PositionwiseFeedForward": lambda m: m.PositionwiseFeedForward(4, 8),
    "PositionwiseFeedForward.forward": lambda m: m.PositionwiseFeedForward.forward(None, 1),
    "AddNorm": lambda m: m.AddNorm(4),
    "AddNorm.forward": lambda m: m.AddNorm.forward(None, 1, 1),
    "EncoderLayer": lambda m: m.EncoderLayer(4, 2, 8),
    "EncoderLayer.forward": lambda m: m.EncoderLayer.forward(None, 1),
    "Encoder": lambda m: m.Encoder(1, 4, 2, 8),
    "Encoder.forward": lambda m: m.Encoder.forward(None, 1),
}
OWNER = {
    "softmax": "softmax",
    "scaled_dot_product_attention": "attention",
    "self_attention": "attention",
    "cosine_similarity": "attention",
    "SelfAttention": "attention",
    "MultiHeadAttention": "multi_head_attention",
    "PositionwiseFeedForward": "feed_forward",
    "AddNorm": "add_norm",
    "EncoderLayer": "encoder",
    "Encoder": "encoder",
}


@pytest.fixture(scope="module")
def stubs():
    name = "_t101_stubs"
    spec = importlib.util.spec_from_file_location(
        name, ASSIGNMENTS / "t101" / "__init__.py", submodule_search_locations=[]
    )
    package = importlib.util.module_from_spec(spec)
    sys.modules[name] = package
    try:
        spec.loader.exec_module(package)
        yield {m: importlib.import_module(f"{name}.{m}") for m in MODULES}
    finally:
        for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
            del sys.modules[key]


def _public(module):
    """(qualified name, object) for every public function, class and class method defined here."""
    for name, obj in vars(module).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
            continue
        yield name, obj
        if inspect.isclass(obj):
            for attr in ("__init__", "forward"):
                yield f"{name}.{attr}", vars(obj)[attr]


def test_reference_package_is_the_solutions():
    assert t101.__file__.replace("\\", "/").endswith("solutions/t101/__init__.py")


@pytest.mark.parametrize("module_name", list(MODULES))
def test_stub_has_the_reference_names_signatures_and_docstrings(stubs, module_name):
    reference = dict(_public(MODULES[module_name]))
    stub = dict(_public(stubs[module_name]))
    assert sorted(stub) == sorted(reference)
    for name, obj in reference.items():
        assert inspect.signature(stub[name]) == inspect.signature(obj), name
        assert inspect.getdoc(stub[name]) == inspect.getdoc(obj), name


@pytest.mark.parametrize("call", list(CALLS))
def test_stub_raises_not_implemented_naming_the_component(stubs, call):
    module_name = OWNER[call.split(".")[0]]
    with pytest.raises(NotImplementedError) as info:
        CALLS[call](stubs[module_name])
    message = str(info.value)
    assert message.startswith(TITLES[module_name] + ": ")
    # The path as the learner's repository has it (the release keeps assignments/t101).
    where = f"assignments/t101/{module_name}.py"
    assert message.endswith(f" is not implemented yet; write it in {where}.")
