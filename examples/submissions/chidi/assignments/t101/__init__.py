"""Transformers 101 (t101): the package you complete, one module per component.

One module per component, each importable on its own (nothing is imported here, so that one
module cannot break another):

    softmax               softmax
    attention             scaled_dot_product_attention, self_attention, cosine_similarity,
                          SelfAttention
    multi_head_attention  MultiHeadAttention
    feed_forward          PositionwiseFeedForward
    add_norm              AddNorm
    encoder               EncoderLayer, Encoder

Symbols used in every docstring: B batch, L query length, S key/value length, d_model model
width, h = num_heads, d_k query/key width, d_v value width, d_ff feed-forward inner width.
Masks are boolean, True where the query may attend to the key.
"""
