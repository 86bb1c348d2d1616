"""The helpers that build torch built-ins from contract state dicts fail clearly when misused."""

import pytest
import torch
from t101.encoder import EncoderLayer
from t101.multi_head_attention import MultiHeadAttention

from tests.graders.support.torch_equivalents import (
    invert_mask,
    to_torch_attn_mask,
    torch_encoder_layer_from,
    torch_mha_from,
)


def test_invert_mask_flips_the_convention():
    mask = torch.tensor([[True, False], [False, False]])
    assert torch.equal(invert_mask(mask), torch.tensor([[False, True], [True, True]]))
    assert invert_mask(None) is None


def test_attn_mask_layout_is_batch_major_then_head():
    mask = torch.zeros(2, 3, 1, 1, dtype=torch.bool)
    mask[1, 2] = True  # batch element 1, head 2 may attend
    out = to_torch_attn_mask(mask, batch_size=2, num_heads=3, tgt_len=1, src_len=1)
    assert out.shape == (6, 1, 1)
    assert out.flatten().tolist() == [True] * 5 + [False]


def test_attn_mask_3d_is_per_batch_element_and_shared_by_heads():
    mask = torch.tensor([[[True, False]], [[False, True]]])  # (B=2, L=1, S=2)
    out = to_torch_attn_mask(mask, batch_size=2, num_heads=2, tgt_len=1, src_len=2)
    assert out[:, 0].tolist() == [[False, True], [False, True], [True, False], [True, False]]


def test_unbroadcastable_mask_is_a_sentence():
    with pytest.raises(ValueError, match=r"broadcastable to \(2, 3, 4, 5\).*got shape \(4, 4\)"):
        to_torch_attn_mask(torch.ones(4, 4, dtype=torch.bool), 2, 3, 4, 5)


def test_missing_parameter_names_what_was_expected():
    state = MultiHeadAttention(8, 2).state_dict()
    del state["W_v.weight"]
    with pytest.raises(KeyError, match="W_v.weight"):
        torch_mha_from(state, 8, 2)


def test_builders_follow_dtype_and_bias_and_return_eval_modules():
    mha = torch_mha_from(MultiHeadAttention(8, 2, bias=False).double().state_dict(), 8, 2)
    assert mha.in_proj_bias is None and mha.in_proj_weight.dtype == torch.float64
    assert not mha.training
    layer = torch_encoder_layer_from(EncoderLayer(8, 2, 16).state_dict(), 8, 2, 16)
    assert not layer.training and layer.linear1.weight.shape == (16, 8)
