"""Recall through the index returns what the scan returns, and keeps doing so as rows change."""

from __future__ import annotations

import random

import numpy as np
import pytest

from commons.core.embedding.hashed import embed_many
from commons.core.learning.lessons import DAY
from commons.core.recall.scoring import top_k
from commons.core.recall.index import IndexParams, RecallIndex, RecallIndexFileError, RecallIndexUsageError

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


def test_many_touches_are_put_back_in_the_index_and_still_found(fixed_store):
    matrix, touched, strength = (a.copy() for a in fixed_store)
    index = built(matrix, touched, strength, params=IndexParams(scan_below=2_000, refresh_after=64))
    rng = np.random.default_rng(4)
    for day in range(1, 11):  # ten days of recalls touching rows
        rows = rng.choice(len(matrix), 20, replace=False)
        touched[rows] = NOW + day * DAY
        index.changed(rows, matrix, touched, strength, NOW + day * DAY)
    assert len(index._fresh) < 64  # put back, not scored in every query for ever
    assert_as_the_scan(index, matrix, touched, strength, NOW + 10 * DAY)


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


def test_a_kept_index_answers_after_a_restart_and_a_stale_one_catches_up(fixed_store):
    matrix, touched, strength = fixed_store
    index = built(matrix, touched, strength)
    kept = index.to_bytes()
    again = RecallIndex.from_bytes(kept, index_params=SMALL_INDEX)
    # Stale: since it was kept, 100 lessons went and 200 came.
    extra = store(9, 200)
    now_ids = ids_for(len(matrix) - 100, 100) + ids_for(200, 10**6)
    now_arrays = [np.concatenate([a[100:], b]) for a, b in zip((matrix, touched, strength), extra)]
    result = again.sync(now_ids, *now_arrays, NOW)
    assert (result.built, result.added, result.removed) == (False, 200, 100)
    assert_as_the_scan(again, *now_arrays, NOW)


def test_bytes_that_are_no_index_or_another_settings_index_are_refused(fixed_store):
    matrix, touched, strength = fixed_store
    kept = built(matrix, touched, strength).to_bytes()
    with pytest.raises(RecallIndexFileError):
        RecallIndex.from_bytes(b"not an index")
    with pytest.raises(RecallIndexFileError):
        RecallIndex.from_bytes(kept[: len(kept) // 2], index_params=SMALL_INDEX)
    with pytest.raises(RecallIndexFileError):
        RecallIndex.from_bytes(kept, index_params=IndexParams(scan_below=2_000, probe_fraction=0.5))


def test_an_index_past_its_horizon_is_built_again(fixed_store):
    matrix, touched, strength = fixed_store
    index = built(matrix, touched, strength)
    later = NOW + SMALL_INDEX.horizon_days * DAY + DAY
    result = index.sync(ids_for(len(matrix)), matrix, touched, strength, later)
    assert result.built and "days ago" in result.reason
    assert_as_the_scan(index, matrix, touched, strength, later)


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
