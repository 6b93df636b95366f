import numpy as np

from commons.core.embedding.hashed import embed, embed_many
from commons.core.recall.scoring import normalised_strength, scores, top_k

DAY = 86400.0


def test_relevant_memory_ranks_first():
    m = embed_many(["pip install failed externally-managed-environment", "cargo borrow checker",
                    "npm ERESOLVE peer dependency"])
    best = top_k(embed("pip install externally-managed-environment"), m, np.zeros(3), np.ones(3), 0.0, k=1)
    assert best[0][0] == 0


def test_score_is_the_weighted_sum_of_the_three_axes():
    v = embed("uv sync")
    s = scores(v, v[None, :], np.array([0.0]), np.array([1.0]), now=30 * DAY)
    assert abs(float(s[0]) - (0.60 * 1.0 + 0.25 * 0.5 + 0.15 * 0.5)) < 1e-5


def test_recency_and_strength_break_ties_between_equally_relevant_memories():
    v = embed("uv sync")
    m = np.stack([v, v, v])
    ranked = top_k(v, m, np.array([0.0, 50 * DAY, 50 * DAY]), np.array([1.0, 1.0, 3.0]), 50 * DAY, k=3)
    assert [i for i, _ in ranked] == [2, 1, 0]


def test_strength_normalisation_saturates_below_one():
    n = normalised_strength(np.array([0.0, 1.0, 3.0, 1e6]))
    assert n[0] == 0 and abs(n[1] - 0.5) < 1e-6 and abs(n[2] - 0.75) < 1e-6 and n[3] < 1


def test_top_k_handles_k_larger_than_the_matrix_and_empty_input():
    v = embed("x")
    assert len(top_k(v, v[None, :], np.zeros(1), np.ones(1), 0.0, k=5)) == 1
    assert top_k(v, np.zeros((0, 256), np.float32), np.zeros(0), np.zeros(0), 0.0) == []
