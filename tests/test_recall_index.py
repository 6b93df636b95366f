"""Recall through the index returns what the scan returns, and keeps doing so as rows change: on
made-up words and on the three seeded corpora of ``tests/benchmarks/recall_corpora.py``."""

from __future__ import annotations

import random

import numpy as np
import pytest

from commons.core.embedding.hashed import embed_many
from commons.core.learning.lessons import DAY
from commons.core.recall.scoring import relevance, top_k
from commons.core.recall.index import IndexParams, RecallIndex, RecallIndexUsageError
from tests.benchmarks.recall_corpora import KINDS, corpus

WORDS = ("pip npm cargo pytest make docker git uv go mypy ruff tsc kubectl terraform error failed permission "
         "denied module missing timeout refused build install test lint deploy cache config schema router worker "
         "queue auth token version 3.12 0.23 --no-deps").split() + [f"name{i}" for i in range(3000)]
NOW = 400 * DAY
# Index from 2,000 rows so that a test store is large enough to go through the columns.
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


def ids_for(rows: int, start: int = 0) -> list[str]:
    return [f"{i:064x}" for i in range(start, start + rows)]


def built(matrix, touched, strength, now=NOW, params=SMALL_INDEX) -> RecallIndex:
    index = RecallIndex(index_params=params)
    result = index.sync(ids_for(len(matrix)), matrix, touched, strength, now)
    assert result.built and not index.scanning
    return index


def assert_as_the_scan(index, matrix, touched, strength, now, count=30, seed=5):
    for q in queries(seed, count):
        got, want = index.top_k(q, matrix, touched, strength, now, k=10), top_k(q, matrix, touched, strength, now, k=10)
        assert rows_of(got) == rows_of(want)
        assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-6)


@pytest.fixture(scope="module")
def fixed_store():
    return store(1, 8_000)


def test_index_results_equal_the_scan_on_a_fixed_set(fixed_store):
    matrix, touched, strength = fixed_store
    index = built(matrix, touched, strength)
    assert_as_the_scan(index, matrix, touched, strength, NOW, count=100, seed=2)
    # Time passing changes only the query: the same index answers as the scan a month later.
    assert_as_the_scan(index, matrix, touched, strength, NOW + 29 * DAY)


def test_rows_touched_or_strengthened_after_the_build_are_found(fixed_store):
    matrix, touched, strength = (a.copy() for a in fixed_store)
    index = built(matrix, touched, strength)
    later = NOW + 3 * DAY
    q = queries(3, 1)[0]
    weakest = rows_of(top_k(q, matrix, touched, strength, later, k=len(matrix)))[-50:]
    touched[weakest] = later  # a recall touched them: their recency jumps to 1
    strength[weakest] = 50.0
    index.changed(weakest, matrix, touched, strength, later)
    assert_as_the_scan(index, matrix, touched, strength, later)
    assert set(weakest) & set(rows_of(index.top_k(q, matrix, touched, strength, later, k=10)))


def test_ten_days_of_touches_keep_the_answers_those_of_the_scan(fixed_store):
    matrix, touched, strength = (a.copy() for a in fixed_store)
    index = built(matrix, touched, strength)
    rng = np.random.default_rng(4)
    for day in range(1, 11):  # ten days of recalls touching rows
        rows = rng.choice(len(matrix), 20, replace=False)
        touched[rows] = NOW + day * DAY
        index.changed(rows, matrix, touched, strength, NOW + day * DAY)
    assert_as_the_scan(index, matrix, touched, strength, NOW + 10 * DAY)


def test_strengths_that_decayed_since_the_sync_are_ranked_as_they_are_now(fixed_store):
    matrix, touched, strength = fixed_store
    index = built(matrix, touched, strength)
    # The caller's strength as of a later now: half of them faded to nothing, so their bounds are loose.
    faded = strength.copy()
    faded[::2] = 0.0
    assert_as_the_scan(index, matrix, touched, faded, NOW + 30)


def test_a_query_long_after_the_sync_or_before_it_answers_as_the_scan(fixed_store):
    matrix, touched, strength = fixed_store
    index = built(matrix, touched, strength)
    assert_as_the_scan(index, matrix, touched, strength, NOW + 90 * DAY)  # bounds made again, tighter
    assert_as_the_scan(index, matrix, touched, strength, NOW - 20 * DAY)  # before the bounds: made for it


@pytest.mark.parametrize("kind", KINDS)
def test_the_top_10_are_the_scans_on_each_seeded_corpus(kind):
    c = corpus(kind, 4_000, 120, seed=7)
    matrix = embed_many(c.texts)
    index = built(matrix, c.touched, c.strength)
    for q, query_kind in zip(embed_many(c.queries), c.query_kinds):
        got, want = index.top_k(q, matrix, c.touched, c.strength, NOW), top_k(q, matrix, c.touched, c.strength, NOW)
        assert got == want, query_kind  # rows and scores, to the bit


def test_a_rows_relevance_has_the_same_bits_whatever_rows_are_beside_it(fixed_store):
    matrix = fixed_store[0]
    rng = np.random.default_rng(12)
    columns = np.ascontiguousarray(matrix.T)
    for q in queries(13, 20):
        whole = relevance(q, matrix)
        assert np.array_equal(relevance(q, columns, columns=True), whole)
        for size in (1, 3, 7, 101):
            rows = np.sort(rng.choice(len(matrix), size, replace=False))
            assert np.array_equal(relevance(q, matrix[rows]), whole[rows])


def test_columns_of_removed_lessons_are_dropped_by_a_build_once_they_are_most(fixed_store):
    matrix, touched, strength = fixed_store

    def keep_only(index, kept):
        return index.sync([i for i, k in zip(ids_for(len(matrix)), kept) if k], matrix[kept], touched[kept],
                          strength[kept], NOW)

    index = built(matrix, touched, strength)
    rows = np.arange(len(matrix))
    result = keep_only(index, rows % 3 != 0)  # a third go: their columns stay, unused
    assert not result.built and result.removed == len(matrix) // 3 + 1
    result = keep_only(index, rows < len(matrix) // 4)  # then most
    assert result.built and "since removed" in result.reason and index.indexed == len(matrix) // 4
    kept = rows < len(matrix) // 4
    assert_as_the_scan(index, matrix[kept], touched[kept], strength[kept], NOW)


def test_an_added_lesson_is_found_and_a_removed_one_never_returns(fixed_store):
    matrix, touched, strength = fixed_store
    ids = ids_for(len(matrix))
    index = built(matrix, touched, strength)
    q = queries(6, 1)[0]
    first = rows_of(index.top_k(q, matrix, touched, strength, NOW))[0]
    # The lesson that ranked first goes (archived, revoked, faded); one matching the query exactly comes.
    keep = np.array([r for r in range(len(matrix)) if r != first])
    new_ids = [ids[r] for r in keep] + ["f" * 64]
    new = (np.concatenate([matrix[keep], q[None, :]]), np.concatenate([touched[keep], [NOW]]),
           np.concatenate([strength[keep], [1.0]]))
    result = index.sync(new_ids, *new, NOW)
    assert (result.added, result.removed, result.built) == (1, 1, False)
    best = rows_of(index.top_k(q, *new, NOW))
    assert new_ids[best[0]] == "f" * 64 and ids[first] not in {new_ids[r] for r in best}
    assert_as_the_scan(index, *new, NOW)


def test_a_lesson_whose_text_changed_is_indexed_again(fixed_store):
    matrix, touched, strength = (a.copy() for a in fixed_store)
    index = built(matrix, touched, strength)
    q = queries(8, 1)[0]
    matrix[17] = q  # same id, new embedding (the lesson was reworded)
    result = index.sync(ids_for(len(matrix)), matrix, touched, strength, NOW)
    assert (result.added, result.removed) == (1, 1)
    assert rows_of(index.top_k(q, matrix, touched, strength, NOW))[0] == 17


def test_a_small_store_keeps_the_scan():
    matrix, touched, strength = store(6, 300)
    index = RecallIndex()
    assert index.sync(ids_for(300), matrix, touched, strength, NOW).scanning
    q = queries(7, 1)[0]
    assert index.top_k(q, matrix, touched, strength, NOW) == top_k(q, matrix, touched, strength, NOW)


def test_a_matrix_that_does_not_match_the_index_is_the_callers_fault():
    matrix, touched, strength = store(8, 100)
    index = RecallIndex()
    with pytest.raises(RecallIndexUsageError):
        index.top_k(queries(9, 1)[0], matrix, touched, strength, NOW)  # never synced
    index.sync(ids_for(100), matrix, touched, strength, NOW)
    with pytest.raises(RecallIndexUsageError):
        index.top_k(queries(9, 1)[0], matrix[:50], touched[:50], strength[:50], NOW)
    with pytest.raises(RecallIndexUsageError):
        index.sync(ids_for(100), matrix, touched[:10], strength, NOW)


def test_the_scan_gives_ties_at_the_kth_place_to_the_lower_rows():
    matrix = np.zeros((50, 4), dtype=np.float32)
    matrix[:, 0] = 1.0  # fifty identical lessons
    result = top_k(np.array([1, 0, 0, 0], dtype=np.float32), matrix, np.full(50, NOW), np.ones(50), NOW, k=5)
    assert rows_of(result) == [0, 1, 2, 3, 4]
