"""Scaled dot-product attention after the TensorFlow tutorial "Transformer model for language
understanding" (tensorflow/text, docs/tutorials/transformer.ipynb, its scaled_dot_product_attention
of 2019-2022): matmul(q, k, transpose_b=True), divided by sqrt(dk) with dk cast to float32, the
mask added times -1e9, softmax over the last axis, matmul with v. The tutorial's mask is 1 where a
key is hidden; the contract's boolean mask (True where a query may attend) is turned into that
(1 - mask). tf.matmul(..., transpose_b=True) is np.swapaxes(k, -1, -2) @; tf.nn.softmax is the
course's softmax. No shape checks (TensorFlow's matmul raises its own error)."""

import numpy as np

from .softmax import softmax


def scaled_dot_product_attention(q, k, v, mask=None):
    matmul_qk = q @ np.swapaxes(k, -1, -2)
    dk = np.float32(k.shape[-1])
    scaled_attention_logits = matmul_qk / np.sqrt(dk)
    if mask is not None:
        scaled_attention_logits += (
            1 - np.asarray(mask, dtype=scaled_attention_logits.dtype)
        ) * -1e9
    attention_weights = softmax(scaled_attention_logits, axis=-1)
    output = attention_weights @ v
    return output, attention_weights
