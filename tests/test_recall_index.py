"""Recall through the index returns what the scan returns, and keeps doing so as rows change."""

from __future__ import annotations

import random

import numpy as np
import pytest

from commons.core.embed import embed_many
from commons.core.lessons import DAY
from commons.core.recall import top_k
from commons.core.recall_index import IndexParams, RecallIndex, RecallIndexUsageError

WORDS = ("pip npm cargo pytest make docker git uv go mypy ruff tsc kubectl terraform error failed permission "
         "denied module missing timeout refused build install test lint deploy cache config schema router worker "
         "queue auth token version 3.12 0.23 --no-deps").split() + [f"name{i}" for i in range(3000)]
NOW = 400 * DAY
# Index from 2,000 rows so that a test store is large enough to go through the graph.
SMALL_INDEX = IndexParams(scan_below=2_000)


def store(seed: int, rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = random.Random(seed)
    weights = [1 / (i + 1) for i in range(len(WORDS))]
    matrix = embed_many([" ".join(rng.choices(WORDS, weights, k=rng.randint(5, 16))) for _ in range(rows)])
    touched = np.array([rng.random() * NOW for _ in range(rows)])
    strength = np.array([rng.random() * 4 for _ in range(rows)], dtype=np.float32)
    return matrix, touched, strength


def queries(seed: int, count: int) -> np.ndarray:
    rng = random.Random(seed)
    return embed_many([" ".join(rng.choices(WORDS[:200], k=rng.randint(3, 10))) for _ in range(count)])


def rows_of(result: list[tuple[int, float]]) -> list[int]:
    return [row for row, _ in result]


@pytest.fixture(scope="module")
def fixed_store():
    return store(1, 8_000)


def test_index_results_equal_the_scan_on_a_fixed_set(fixed_store):
    matrix, touched, strength = fixed_store
    index = RecallIndex(matrix, touched, strength, NOW, index_params=SMALL_INDEX)
    assert not index.scanning
    for q in queries(2, 60):
        got, want = index.top_k(q, matrix, touched, strength, NOW, k=10), top_k(q, matrix, touched, strength, NOW, k=10)
        assert rows_of(got) == rows_of(want)
        assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-6)


def test_rows_touched_added_or_strengthened_after_the_build_are_found(fixed_store):
    matrix, touched, strength = (a.copy() for a in fixed_store)
    index = RecallIndex(matrix, touched, strength, NOW, index_params=SMALL_INDEX)
    later = NOW + 3 * DAY  # time passed: the sorted priors are upper bounds still
    q = queries(3, 1)[0]
    weakest = rows_of(top_k(q, matrix, touched, strength, later, k=len(matrix)))[-50:]
    touched[weakest] = later  # a recall touched them: their recency jumps to 1
    strength[weakest] = 50.0
    index.changed(weakest, touched, strength, later)
    extra = store(4, 500)
    matrix, touched, strength = (np.concatenate([a, b]) for a, b in zip((matrix, touched, strength), extra))
    index.extend(matrix, touched, strength, later)
    for q in queries(5, 30):
        assert rows_of(index.top_k(q, matrix, touched, strength, later)) == rows_of(top_k(q, matrix, touched, strength, later))


def test_a_small_store_keeps_the_scan():
    matrix, touched, strength = store(6, 300)
    index = RecallIndex(matrix, touched, strength, NOW)
    assert index.scanning
    q = queries(7, 1)[0]
    assert index.top_k(q, matrix, touched, strength, NOW) == top_k(q, matrix, touched, strength, NOW)


def test_a_matrix_that_does_not_match_the_index_is_the_callers_fault():
    matrix, touched, strength = store(8, 100)
    index = RecallIndex(matrix, touched, strength, NOW)
    with pytest.raises(RecallIndexUsageError):
        index.top_k(queries(9, 1)[0], matrix[:50], touched[:50], strength[:50], NOW)
    with pytest.raises(RecallIndexUsageError):
        index.extend(matrix, touched[:10], strength, NOW)


def test_the_scan_gives_ties_at_the_kth_place_to_the_lower_rows():
    matrix = np.zeros((50, 4), dtype=np.float32)
    matrix[:, 0] = 1.0  # fifty identical lessons
    result = top_k(np.array([1, 0, 0, 0], dtype=np.float32), matrix, np.full(50, NOW), np.ones(50), NOW, k=5)
    assert rows_of(result) == [0, 1, 2, 3, 4]
