"""Recall through an index: exactly the top k of ``recall.top_k``, reading only the query's columns.

A recall score is ``w_rel · max(q · x, 0) + w_rec · recency + w_str · str(x)``. The query's
embedding is sparse: a few words and bigrams hashed into 256 dimensions set 5 to 30 of them (the
median is 5 on ``bench_recall_index.py``'s queries), and ``q · x`` is a sum over those alone. So the
index keeps the lessons' embeddings by dimension (a ``(256, n)`` float32 array: each dimension's
column contiguous) and computes every lesson's relevance from the query's columns only, with the
same float32 operations as the scan (``scoring.relevance``): the same bits, row by row.

Beside the columns it keeps each lesson's prior bound ``P = w_rec · recency + w_str · str`` as of
the last sync or change. Both only fall as time passes (recency decays, so does strength), so for
any later ``now`` the bound ``U = w_rel · relevance + P + slack`` is at least the lesson's score.
The top k follow by construction:

1. ``U`` for every lesson; the rows whose ``U`` is at least the k-th largest are scored exactly
   (``scoring.scores``, as the scan scores them, on the caller's arrays as they are now);
2. ``T``, the k-th best exact score among them; every lesson whose ``U`` reaches ``T`` is scored
   too (none, unless bounds were loose: a strength that decayed since the sync);
3. any lesson left out has a score below ``U < T``, under k scored lessons: it is not in the top k.

Why not an approximate index: faiss IVF-Flat over the score-shaped vectors (this module's form
until 2026-12-02, commit 6bad8e0) returned the scan's top 10 in 199 / 200 queries over its own
benchmark's texts but in 105 / 200 over ``recall_corpora``'s lesson-shaped ones at 10^5 (184 / 200
over its error lines): the hashed embeddings are weakly clustered, the cells it probed missed
rows, and no bound on the cells left out could say so. (Measured on 2026-12-02 by running that
commit's ``RecallIndex`` and ``top_k`` over ``corpus(kind, 100_000, 200, 1)``.)

The columns are as large as the matrix (1 KB a lesson) and made by one transpose: no training, no
file to keep. Small stores keep the scan (``IndexParams.scan_below``). Sans-I/O: arrays in, rows out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from commons.core.learning import decay_factor
from commons.core.recall.scoring import RecallParams, normalised_strength, relevance, scores, top_k

# Added to every prior bound: float32 rounding of a score is below 1e-7; this covers it many times
# over and lets only near-ties of the k-th score be scored exactly beside the top k.
SLACK = 1e-5
# A build over this many lessons is said to ``progress`` (a transpose of a quarter of a GB and up:
# a noticeable fraction of a second); smaller ones are not worth a line on every process's stderr.
SAY_BUILD_FROM = 250_000


class RecallIndexUsageError(ValueError):
    """The caller broke the index's contract (arrays that do not match what it was synced with)."""


@dataclass(frozen=True)
class IndexParams:
    # Lessons; below this recall scans (a scan of 10^4 lessons takes about a millisecond; the index
    # would double the matrix's memory to save a fraction of it).
    scan_below: int = 20_000
    # The prior bounds are made again when a query comes this long after they were (they only
    # loosen with time, never fail; loose bounds cost exact scores, not answers).
    refresh_after_s: float = 3600.0
    # Rebuilt (a transpose) when this share of the columns belongs to lessons since removed.
    compact_dead_share: float = 0.5

    def __post_init__(self) -> None:
        if self.scan_below < 1 or self.refresh_after_s <= 0 or not 0 < self.compact_dead_share < 1:
            raise ValueError("IndexParams: scan_below >= 1, refresh_after_s > 0, compact_dead_share in (0, 1)")


@dataclass(frozen=True)
class SyncResult:
    """What bringing the index up to date with the lessons did."""

    rows: int
    scanning: bool
    built: bool  # the columns were made anew (first time past scan_below, compacted)
    added: int
    removed: int
    reason: str  # why it was built, '' when it was not

    def to_json(self) -> dict:
        return {"rows": self.rows, "scanning": self.scanning, "built": self.built, "added": self.added,
                "removed": self.removed, "reason": self.reason}


# The strengths of the rows, or a function of rows giving them (computed for the rows asked only).
Strength = np.ndarray | Callable[[np.ndarray], np.ndarray]


def _strength_of(strength: Strength) -> Callable[[np.ndarray], np.ndarray]:
    return strength if callable(strength) else (lambda rows: strength[rows])


def _checksum(vectors: np.ndarray) -> np.ndarray:
    """A number per row that changes when its embedding does (a fixed random projection)."""
    probe = np.random.default_rng(20261201).standard_normal(vectors.shape[1]).astype(np.float32)
    return np.asarray(vectors, dtype=np.float32) @ probe


class RecallIndex:
    """The top k of a lesson matrix, from its columns and prior bounds, when large.

    Rows are lessons, named by id; :meth:`sync` brings the index up to date with the ids and arrays
    the caller holds now (adds, removals, changed embeddings, changed priors), :meth:`changed`
    with rows a recall touched, and :meth:`top_k` answers for exactly those arrays.
    """

    def __init__(self, params: RecallParams = RecallParams(), index_params: IndexParams = IndexParams(),
                 dim: int = 256) -> None:
        self.params, self.index_params, self.dim = params, index_params, dim
        self._columns: np.ndarray | None = None  # (dim, capacity) float32, None while scanning
        self._used = 0  # keys given out (columns filled)
        self._ids: list[str] = []  # key -> lesson id (keys are column positions, reused only by a build)
        self._key_of: dict[str, int] = {}
        self._check = np.zeros(0, dtype=np.float32)  # key -> embedding checksum
        self._prior = np.zeros(0, dtype=np.float32)  # key -> prior bound (-inf: no lesson)
        self._prior_at = 0.0  # the bounds hold for every now from this one
        self._row_of_key = np.zeros(0, dtype=np.int64)  # key -> row of the synced arrays, -1 if none
        self._key_of_row = np.zeros(0, dtype=np.int64)  # row -> key
        self._rows = 0
        self._synced = False

    def __len__(self) -> int:
        return self._rows

    @property
    def scanning(self) -> bool:
        return self._columns is None

    @property
    def indexed(self) -> int:
        """Lessons the columns hold."""
        return len(self._key_of)

    # -- keeping it up to date ---------------------------------------------------------------------

    def sync(self, ids: Sequence[str], matrix: np.ndarray, touched: np.ndarray, strength: np.ndarray,
             now: float, progress: Callable[[str], None] | None = None) -> SyncResult:
        """Follow the caller's lessons as they are now: one row per id, in the caller's order."""
        self._check_arrays(matrix, touched, strength, len(ids))
        n, ip = len(ids), self.index_params
        self._rows, self._synced = n, True
        if n < ip.scan_below:
            self._drop()
            return SyncResult(n, True, False, 0, 0, "")
        if self._columns is None:
            return self._build(ids, matrix, touched, strength, now, f"{n} lessons, the index starts at {ip.scan_below}",
                               progress)
        keys = np.fromiter((self._key_of.get(i, -1) for i in ids), dtype=np.int64, count=n)
        known = np.flatnonzero(keys >= 0)
        moved = known[np.abs(_checksum(matrix[known]) - self._check[keys[known]]) > 1e-4]
        present = np.zeros(self._used, dtype=bool)
        present[keys[known]] = True
        gone = np.flatnonzero((self._prior[: self._used] > -np.inf) & ~present)
        dead = self._used - len(self._key_of) + len(gone) + 2 * len(moved)  # a moved one leaves a column, takes one
        if dead > ip.compact_dead_share * (self._used + n - len(known) + len(moved)):
            return self._build(ids, matrix, touched, strength, now,
                               f"{dead} of its columns would be of lessons since removed or changed", progress)
        self._remove(np.concatenate([gone, keys[moved]]))
        keys[moved] = -1
        new_rows = np.flatnonzero(keys < 0)
        keys[new_rows] = self._add([ids[r] for r in new_rows], matrix[new_rows])
        self._map_rows(keys)
        self._bound_all(touched, strength, now)
        return SyncResult(n, False, False, len(new_rows), len(gone) + len(moved), "")

    def _build(self, ids: Sequence[str], matrix: np.ndarray, touched: np.ndarray, strength: np.ndarray, now: float,
               reason: str, progress: Callable[[str], None] | None) -> SyncResult:
        if progress and len(ids) >= SAY_BUILD_FROM:
            progress(f"recall index: {len(ids)} lessons by dimension ({reason})")
        self._drop()
        self._columns = np.empty((self.dim, max(len(ids), 1024)), dtype=np.float32)
        self._map_rows(self._add(ids, matrix))
        self._bound_all(touched, strength, now)
        return SyncResult(len(ids), False, True, len(ids), 0, reason)

    def changed(self, rows: Sequence[int] | np.ndarray, matrix: np.ndarray, touched: np.ndarray,
                strength: Strength, now: float) -> None:
        """These rows' last touch or strength changed (a recall touched them, a verification came)."""
        strength_of = _strength_of(strength)
        self._check_arrays(matrix, touched, touched if callable(strength) else strength, self._rows)
        if self._columns is None or not len(rows):
            return
        rows = np.asarray(rows, dtype=np.int64)
        # Bounds as of the time the others hold from: a touch after it counts as "now" (1).
        self._prior[self._key_of_row[rows]] = self._bounds(touched[rows], strength_of(rows), self._prior_at)
        self._prior_at = max(self._prior_at, now)  # a strength raised now may be higher than before now

    def _bound_all(self, touched: np.ndarray, strength: Strength, now: float) -> None:
        rows = np.arange(self._rows)
        self._prior[self._key_of_row] = self._bounds(touched, _strength_of(strength)(rows), now)
        self._prior_at = now

    def _bounds(self, touched: np.ndarray, strength: np.ndarray, now: float) -> np.ndarray:
        p = self.params
        recency = decay_factor(touched, now, p.recency_half_life_days).astype(np.float32)
        return (p.recency_weight * recency + p.strength_weight * normalised_strength(strength) + SLACK).astype(np.float32)

    def _map_rows(self, keys: np.ndarray) -> None:
        """``keys[row]`` is the key of each row of the synced arrays."""
        self._key_of_row = keys
        self._row_of_key = np.full(self._columns.shape[1], -1, dtype=np.int64)
        self._row_of_key[keys] = np.arange(len(keys))

    def _add(self, ids: Sequence[str], matrix: np.ndarray) -> np.ndarray:
        start, count = self._used, len(ids)
        if start + count > self._columns.shape[1]:
            grown = np.empty((self.dim, max(2 * self._columns.shape[1], start + count)), dtype=np.float32)
            grown[:, :start] = self._columns[:, :start]
            self._columns = grown
        step = 65_536  # transposed in slices: a copy of 10^6 rows at once would be a second GB
        for i in range(0, count, step):
            part = matrix[i:i + step]
            self._columns[:, start + i:start + i + len(part)] = part.T
        keys = np.arange(start, start + count, dtype=np.int64)
        self._used += count
        self._ids.extend(ids)
        self._key_of.update(zip(ids, keys.tolist()))
        self._check = np.concatenate([self._check, _checksum(matrix)])
        prior = np.full(self._columns.shape[1], -np.inf, dtype=np.float32)
        prior[: len(self._prior)] = self._prior[: self._columns.shape[1]]
        self._prior = prior
        return keys

    def _remove(self, keys: np.ndarray) -> None:
        self._prior[keys] = -np.inf
        for k in keys.tolist():
            self._key_of.pop(self._ids[k], None)

    def _drop(self) -> None:
        self._columns, self._used, self._ids, self._key_of = None, 0, [], {}
        self._check = self._prior = np.zeros(0, dtype=np.float32)
        self._row_of_key = self._key_of_row = np.zeros(0, dtype=np.int64)

    def _check_arrays(self, matrix: np.ndarray, touched: np.ndarray, strength: np.ndarray, rows: int) -> None:
        if matrix.ndim != 2 or matrix.shape[1] != self.dim:
            raise RecallIndexUsageError(f"RecallIndex: a matrix of shape {matrix.shape}, the index is of {self.dim} columns")
        if len(matrix) != rows or len(touched) != rows or len(strength) != rows:
            raise RecallIndexUsageError(f"RecallIndex: {len(matrix)} rows, {len(touched)} touches, {len(strength)} "
                                        f"strengths for {rows} lessons: sync() after the lessons change")

    # -- recall ------------------------------------------------------------------------------------

    def top_k(self, query_vec: np.ndarray, matrix: np.ndarray, touched: np.ndarray, strength: Strength,
              now: float, k: int = 10) -> list[tuple[int, float]]:
        """What ``recall.top_k`` returns for these arguments (rows, best first), the arrays synced.

        ``strength`` may be a function of rows: the caller's strength as of ``now`` (it decays),
        then computed for the scored rows only, not for every lesson in every query.
        """
        if not self._synced:
            raise RecallIndexUsageError("RecallIndex: sync() with the lessons before the first query")
        strength_of = _strength_of(strength)
        self._check_arrays(matrix, touched, touched if callable(strength) else strength, self._rows)
        if self._columns is None or k <= 0 or k * 4 > self._rows:
            return top_k(query_vec, matrix, touched, strength_of(np.arange(self._rows)), now, k, self.params)
        if now < self._prior_at or now > self._prior_at + self.index_params.refresh_after_s:
            self._bound_all(touched, strength_of, now)  # a query from before the bounds, or they grew loose
        bound = relevance(query_vec, self._columns[:, : self._used], columns=True)
        bound *= np.float32(self.params.relevance_weight)
        bound += self._prior[: self._used]
        first = np.flatnonzero(bound >= np.partition(bound, -k)[-k])
        rows, exact = self._scored(first, query_vec, matrix, touched, strength_of, now)
        kth = np.partition(exact, -k)[-k]
        more = np.setdiff1d(np.flatnonzero(bound >= kth), first, assume_unique=True)
        if len(more):  # bounds looser than the k-th score (a strength decayed since the sync)
            extra_rows, extra = self._scored(more, query_vec, matrix, touched, strength_of, now)
            rows, exact = np.concatenate([rows, extra_rows]), np.concatenate([exact, extra])
        best = np.lexsort((rows, -exact))[:k]  # best first, ties by lower row: as top_k
        return [(int(rows[i]), float(exact[i])) for i in best]

    def _scored(self, keys: np.ndarray, query_vec: np.ndarray, matrix: np.ndarray, touched: np.ndarray,
                strength_of: Callable[[np.ndarray], np.ndarray], now: float) -> tuple[np.ndarray, np.ndarray]:
        rows = self._row_of_key[keys]
        rows = rows[rows >= 0]
        return rows, scores(query_vec, matrix[rows], touched[rows], strength_of(rows), now, self.params)
