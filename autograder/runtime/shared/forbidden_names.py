"""Every name under which a forbidden API can be reached, from the course's `[forbidden] apis`.

An instructor lists public names (`torch.nn.functional.scaled_dot_product_attention`,
`torch.nn.MultiheadAttention`). The same computation answers to other names: the aten operator
(`torch.ops.aten.scaled_dot_product_attention.default`), the C bindings
(`torch._C._VariableFunctions._scaled_dot_product_attention_math`, `torch._C._nn...`), the
module a class is defined in (`torch.nn.modules.activation.MultiheadAttention`) and the kernels
a public function dispatches to (`_native_multi_head_attention` under `MultiheadAttention`).
This module turns the list into a matcher of dotted names:

* under the root package of a listed API (``torch``), any part of a dotted name that is the
  leaf of a listed API, or one of TORCH_KERNELS' names for it, or whose words include all the
  words of such a leaf (``_scaled_dot_product_flash_attention_for_cpu`` holds
  ``scaled dot product attention``) is a use of that API, whatever the parts around it;
* anywhere else (an attribute of an object the check cannot name, a string), only those exact
  leaves and kernel names count, and only when the learner's package defines no such name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: torch's own names for what a public API computes (leaf -> kernels it runs or is built on):
#: knowledge of torch, not of any course. A course that forbids the leaf forbids these too.
TORCH_KERNELS: dict[str, tuple[str, ...]] = {
    "scaled_dot_product_attention": (
        "_scaled_dot_product_attention_math",
        "_scaled_dot_product_attention_math_for_mps",
        "_scaled_dot_product_flash_attention",
        "_scaled_dot_product_flash_attention_for_cpu",
        "_scaled_dot_product_efficient_attention",
        "_scaled_dot_product_cudnn_attention",
        "_scaled_dot_product_fused_attention_overrideable",
        "_flash_attention_forward",
        "_efficient_attention_forward",
    ),
    "multi_head_attention_forward": ("_native_multi_head_attention",),
    "MultiheadAttention": ("multi_head_attention_forward", "_native_multi_head_attention"),
    "TransformerEncoderLayer": ("_transformer_encoder_layer_fwd",),
    "TransformerEncoder": ("TransformerEncoderLayer", "_transformer_encoder_layer_fwd"),
    "Transformer": (
        "TransformerEncoder",
        "TransformerEncoderLayer",
        "TransformerDecoder",
        "TransformerDecoderLayer",
        "_transformer_encoder_layer_fwd",
    ),
}

_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def words(name: str) -> frozenset[str]:
    """The lower-case words of an identifier: ``_scaled_dot_product_attention_math`` ->
    {scaled, dot, product, attention, math}; ``MultiheadAttention`` -> {multihead, attention}."""
    return frozenset(word.lower() for word in _WORDS.findall(name))


@dataclass(frozen=True)
class ForbiddenNames:
    """The matcher for one course's forbidden APIs.

    Attributes:
        apis: the configured APIs, as course.toml lists them.
        roots: the top-level packages they live in (``torch``, ``numpy``).
        leaves: exact name -> the configured API it stands for (leaves and kernel names).
    """

    apis: tuple[str, ...]
    roots: frozenset[str]
    leaves: dict[str, str]

    @classmethod
    def from_apis(cls, apis: tuple[str, ...] | list[str]) -> ForbiddenNames:
        leaves: dict[str, str] = {}
        for api in apis:  # a listed name stands for itself, before any API it is a kernel of
            leaves.setdefault(api.rsplit(".", 1)[-1], api)
        for api in apis:
            if api.split(".", 1)[0] == "torch":
                for kernel in TORCH_KERNELS.get(api.rsplit(".", 1)[-1], ()):
                    leaves.setdefault(kernel, api)
        return cls(tuple(apis), frozenset(a.split(".", 1)[0] for a in apis), leaves)

    def in_path(self, dotted: str) -> str | None:
        """The configured API that a dotted name rooted in one of ``roots`` reaches, or None:
        ``torch.ops.aten._native_multi_head_attention.default`` -> the API whose kernel that is."""
        parts = dotted.split(".")
        if len(parts) < 2 or parts[0] not in self.roots:
            return None
        for part in parts[1:]:
            api = self.leaves.get(part) or self._by_words(part, parts[0])
            if api is not None:
                return api
        return None

    def exact(self, name: str) -> str | None:
        """The configured API whose leaf (or kernel) ``name`` is exactly, or None."""
        return self.leaves.get(name)

    def _by_words(self, part: str, root: str) -> str | None:
        have = words(part)
        for leaf, api in self.leaves.items():
            wanted = words(leaf)
            if api.split(".", 1)[0] == root and len(wanted) > 1 and wanted <= have:
                return api
        return None
