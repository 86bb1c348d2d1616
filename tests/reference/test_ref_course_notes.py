"""The references reproduce the numbers recorded in the class notes (lecture 000).

NumPy part: sections "Create one reproducible vector per vocabulary entry", "Initialize three
projection matrices" and "Matrix multiplication equals the expanded weighted sum".
PyTorch part: section "The second bank comparison".
"""

import numpy as np
import pytest
import torch
from t101.attention import SelfAttention, cosine_similarity, self_attention

VOCAB = ["bank", "of", "the", "river", "account", "money", "has", "today"]
D_MODEL = 8


def build_embeddings(vocab_words, d_model, seed=0):
    """The notebook's toy table: one normal vector per unique word, in sorted order."""
    rng = np.random.default_rng(seed)
    return {w: rng.normal(size=d_model) for w in sorted(set(vocab_words))}


@pytest.fixture
def notebook_numpy():
    table = build_embeddings(VOCAB, D_MODEL)
    rng = np.random.default_rng(1)
    W_q = rng.normal(scale=0.5, size=(D_MODEL, D_MODEL))
    W_k = rng.normal(scale=0.5, size=(D_MODEL, D_MODEL))
    W_v = rng.normal(scale=0.5, size=(D_MODEL, D_MODEL))
    sentence = "bank of the river".split()
    X = np.stack([table[w] for w in sentence])  # (4, 8)
    return sentence, X, W_q, W_k, W_v


def test_literal_mix_of_inputs_matches_the_recorded_first_row(notebook_numpy):
    sentence, X, W_q, W_k, W_v = notebook_numpy
    _, weights = self_attention(X, W_q, W_k, W_v)
    assert weights.shape == (4, 4)
    np.testing.assert_allclose(weights.sum(axis=-1), np.ones(4), atol=1e-12)
    y_literal = weights @ X
    y1_manual = sum(weights[0, j] * X[j] for j in range(4))
    np.testing.assert_allclose(y_literal[0], y1_manual, atol=1e-12)
    np.testing.assert_allclose(y_literal[0, :3], [0.3247, 0.5943, 0.2543], atol=5e-5)


def test_bank_attends_most_to_the(notebook_numpy):
    sentence, X, W_q, W_k, W_v = notebook_numpy
    _, weights = self_attention(X, W_q, W_k, W_v)
    assert sentence[int(np.argmax(weights[0]))] == "the"


def test_second_bank_comparison_in_pytorch():
    torch.manual_seed(0)
    embedding = torch.nn.Embedding(len(VOCAB), D_MODEL)
    attention = SelfAttention(D_MODEL)
    word2idx = {w: i for i, w in enumerate(VOCAB)}

    def bank_vectors(sentence):
        X = embedding(torch.tensor([word2idx[w] for w in sentence.split()]))  # (L, d_model)
        Y, _ = attention(X)  # (L, d_model)
        return X[0].detach().numpy(), Y[0].detach().numpy()

    raw_river, ctx_river = bank_vectors("bank of the river")
    raw_money, ctx_money = bank_vectors("bank account has money")
    np.testing.assert_array_equal(raw_river, raw_money)
    assert cosine_similarity(raw_river, raw_money) == pytest.approx(1.0, abs=1e-12)
    assert cosine_similarity(ctx_river, ctx_money) == pytest.approx(0.814038, abs=1e-6)
