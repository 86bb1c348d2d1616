"""Where each catalogued mistake of this course can be fixed in a learner's source: {mistake id:
Place} (support.source_nodes), searched by support.locations. A mistake missing here gets no
line, never a guess; tests/reference/test_learner_lines.py checks each on its mutant.
"""

from __future__ import annotations

import ast

from tests.graders.support.source_nodes import (
    Place,
    calls,
    calls_containing,
    calls_self,
    fills_mask,
    normalises,
    reshapes,
    returns,
    scales,
    scores_product,
    sets_self,
    transposes,
)

SOFTMAX = ("softmax",)
ATTENTION = ("scaled_dot_product_attention", "self_attention", "SelfAttention")
MHA = ("MultiHeadAttention",)
FFN = ("PositionwiseFeedForward",)
ADD_NORM = ("AddNorm",)


def _each_mistake(places: dict[tuple[str, ...], Place]) -> dict[str, Place]:
    """{mistake id: Place} from {the mistakes fixed at one place: that Place}."""
    return {mistake: place for mistakes, place in places.items() for mistake in mistakes}


PLACES: dict[str, Place] = _each_mistake(
    {
        ("softmax/no-max-shift",): Place(
            "softmax", SOFTMAX, calls("exp"), "the line that calls exp"
        ),
        ("softmax/global-max", "softmax/nan-all-inf"): Place(
            "softmax", SOFTMAX, calls("max", "amax"), "the line that takes the maximum"
        ),
        ("softmax/wrong-axis",): Place(
            "softmax", SOFTMAX, calls("sum"), "the line that takes the sum"
        ),
        ("softmax/integer-output",): Place(
            "softmax",
            SOFTMAX,
            calls("zeros_like", "empty_like", "full_like"),
            "the line that makes the output array",
        ),
        ("attention/no-scale",): Place(
            "attention", ATTENTION, scores_product, "the line that computes the scores"
        ),
        ("attention/scale-by-d-k", "attention/scale-by-d-v", "attention/scale-by-d-model"): Place(
            "attention", ATTENTION, scales, "the line that scales the scores"
        ),
        ("attention/float32-inside",): Place(
            "attention", ATTENTION, calls("float32"), "the line that makes a float32 number"
        ),
        ("attention/softmax-over-queries",): Place(
            "attention", ATTENTION, calls("softmax"), "the line that calls the softmax"
        ),
        ("attention/k-transposed-all-axes", "attention/k-transpose-fixed-axes"): Place(
            "attention", ATTENTION, transposes, "the line that transposes K"
        ),
        (
            "attention/mask-fill-zero",
            "attention/mask-fill-small-negative",
            "attention/mask-inverted",
            "attention/padding-over-queries",
            "attention/blank-row-uniform",
            "attention/mask-after-softmax",
        ): Place("attention", ATTENTION, fills_mask, "the line that applies the mask"),
        ("attention/mask-ignored",): Place(
            "attention", ATTENTION, calls("softmax"), "the softmax the mask must come before"
        ),
        ("multi_head_attention/split-without-transpose",): Place(
            "multi_head_attention", MHA, reshapes, "the line that splits the heads"
        ),
        ("multi_head_attention/merge-without-transpose",): Place(
            "multi_head_attention", MHA, reshapes, "the line that merges the heads", last=True
        ),
        ("multi_head_attention/kv-from-query",): Place(
            "multi_head_attention",
            MHA,
            calls_self("W_k", "W_v"),
            "the line that projects the keys or values",
        ),
        (
            "multi_head_attention/no-output-projection",
            "multi_head_attention/weights-before-dropout",
        ): Place(
            "multi_head_attention", ("MultiHeadAttention.forward",), returns, "the return line"
        ),
        ("multi_head_attention/scale-by-d-model",): Place(
            "multi_head_attention", MHA, scales, "the line that scales the scores"
        ),
        ("multi_head_attention/no-scale",): Place(
            "multi_head_attention", MHA, scores_product, "the line that computes the scores"
        ),
        ("multi_head_attention/averaged-weights",): Place(
            "multi_head_attention", MHA, calls("mean"), "the line that averages the weights"
        ),
        (
            "multi_head_attention/mask-inverted",
            "multi_head_attention/mask-no-head-axis",
            "multi_head_attention/fully-masked-query",
        ): Place("multi_head_attention", MHA, fills_mask, "the line that applies the mask"),
        ("multi_head_attention/mask-head-axis-always",): Place(
            "multi_head_attention",
            MHA,
            calls("unsqueeze", "expand_dims"),
            "the line that adds the head axis",
        ),
        ("multi_head_attention/dropout-in-eval",): Place(
            "multi_head_attention", MHA, calls("dropout"), "the line that applies the dropout"
        ),
        ("multi_head_attention/dropout-on-output",): Place(
            "multi_head_attention",
            ("MultiHeadAttention.forward",),
            calls_containing("dropout"),
            "the line of the dropout",
            last=True,
        ),
        ("multi_head_attention/dropout-missing",): Place(
            "multi_head_attention", MHA, calls("softmax"), "the softmax the dropout must follow"
        ),
        ("multi_head_attention/indivisible-not-refused",): Place(
            "multi_head_attention",
            ("MultiHeadAttention.__init__",),
            lambda node: isinstance(node, ast.Assert),
            "the assert",
        ),
        ("multi_head_attention/bias-ignored",): Place(
            "multi_head_attention",
            ("MultiHeadAttention.__init__",),
            calls("Linear"),
            "the line that creates the first projection",
        ),
        ("multi_head_attention/add-norm-inside",): Place(
            "multi_head_attention",
            MHA,
            calls("LayerNorm", "layer_norm"),
            "the line of the LayerNorm",
        ),
        ("multi_head_attention/float32-inside",): Place(
            "multi_head_attention",
            MHA,
            calls("FloatTensor", "tensor", "float32"),
            "the line that makes a float32 tensor",
        ),
        ("feed_forward/no-relu",): Place(
            "feed_forward",
            ("PositionwiseFeedForward.forward",),
            calls_self("W_1"),
            "the line of W_1",
        ),
        ("feed_forward/relu-after-second-linear",): Place(
            "feed_forward", FFN, calls("relu"), "the line of the ReLU"
        ),
        ("feed_forward/gelu",): Place(
            "feed_forward", FFN, calls("gelu", "GELU"), "the line of the GELU"
        ),
        ("feed_forward/residual-inside",): Place(
            "feed_forward", ("PositionwiseFeedForward.forward",), returns, "the return line"
        ),
        ("feed_forward/dropout-after-second-linear",): Place(
            "feed_forward", FFN, calls("dropout", "Dropout"), "the line of the dropout", last=True
        ),
        ("feed_forward/dropout-missing",): Place(
            "feed_forward",
            ("PositionwiseFeedForward.forward",),
            calls_self("W_2"),
            "the line of W_2",
        ),
        ("feed_forward/add-norm-inside",): Place(
            "feed_forward", FFN, calls("LayerNorm", "layer_norm"), "the line of the LayerNorm"
        ),
        (
            "add_norm/pre-norm",
            "add_norm/no-residual",
            "add_norm/no-sublayer",
            "add_norm/no-norm",
        ): Place("add_norm", ("AddNorm.forward",), returns, "the return line"),
        ("add_norm/dropout-in-eval",): Place(
            "add_norm", ADD_NORM, calls("dropout"), "the line that applies the dropout"
        ),
        ("add_norm/dropout-after-norm",): Place(
            "add_norm", ("AddNorm.forward",), returns, "the return line"
        ),
        ("add_norm/eps-ignored", "add_norm/custom-layer-norm"): Place(
            "add_norm", ("AddNorm.__init__",), sets_self("norm"), "the line that creates the norm"
        ),
        ("add_norm/unbiased-variance",): Place(
            "add_norm", ADD_NORM, calls("std", "var"), "the line that takes the deviation"
        ),
        ("add_norm/eps-outside-sqrt",): Place(
            "add_norm", ADD_NORM, calls("std", "sqrt"), "the line that takes the deviation"
        ),
        ("encoder/second-residual-from-input", "encoder/norms-swapped"): Place(
            "encoder", ("EncoderLayer.forward",), calls_self("add_norm_2"), "the line of add_norm_2"
        ),
        ("encoder/feed-forward-on-input",): Place(
            "encoder",
            ("EncoderLayer.forward",),
            calls_self("feed_forward"),
            "the feed-forward line",
        ),
        ("encoder/first-add-norm-skipped", "encoder/mask-not-passed"): Place(
            "encoder", ("EncoderLayer.forward",), calls_self("self_attn"), "the self-attention line"
        ),
        ("encoder/feed-forward-skipped",): Place(
            "encoder", ("EncoderLayer.forward",), returns, "the return line"
        ),
        ("encoder/pre-norm",): Place(
            "encoder", ("EncoderLayer.forward",), normalises, "the line that normalises first"
        ),
        ("encoder/shared-layer",): Place(
            "encoder", ("Encoder.__init__",), sets_self("layers"), "the line that makes the layers"
        ),
        ("encoder/layers-read-input", "encoder/stack-mask-not-passed"): Place(
            "encoder", ("Encoder.forward",), calls("layer"), "the line that calls a layer"
        ),
        ("encoder/only-first-layer",): Place(
            "encoder", ("Encoder.forward",), returns, "the return line"
        ),
        ("encoder/layers-reversed",): Place(
            "encoder",
            ("Encoder.forward",),
            lambda node: isinstance(node, ast.For),
            "the loop over the layers",
        ),
        ("encoder/final-norm",): Place(
            "encoder",
            ("Encoder.__init__",),
            sets_self(containing="norm"),
            "the line that creates the final norm",
        ),
    }
)
