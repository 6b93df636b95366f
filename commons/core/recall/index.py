"""Recall through an index: the top k of ``recall.top_k`` without scoring every lesson.

A recall score is ``w_rel · cos(q, x) + w_rec · 2^((touched - now) / h) + w_str · str(x)``. The
recency term factorises: ``2^((touched - now) / h) = 2^((touched - t_ref) / h) · 2^((t_ref - now) / h)``,
one factor of the row, one of the query. So the whole score is an inner product of two vectors in
258 dimensions, the row's ``[x, a, b]`` and the query's ``[w_rel · q, w_rec · 2^((t_ref - now) / h),
w_str]``, with ``a = 2^((touched - t_ref) / h)`` and ``b`` the normalised strength (the clip of a
negative cosine at 0 aside, which only lowers rows that are no answer). An index built once answers
for any later ``now``: time only changes the query.

The index (faiss ``IndexIVFFlat``, inner product: rows in ``4·√n`` cells, the cells whose centres
score best probed) returns the ``candidates`` best rows; they, and every *fresh* row, are scored
exactly (``recall.scores``) and the best k returned. A row is fresh when its copy in the index
scores it lower than it now scores: a recall touched it, its strength grew. Fresh rows are
candidates in every query until there are ``refresh_after`` of them, when they are put in the
index again with their present values. A row whose copy scores it higher (strength decays as
days pass) is not fresh: it may take a candidate's place, but its exact score is what counts.

Why IVF-Flat and these settings, measured by ``tests/benchmarks/bench_recall_index.py --compare``
(2026-12-01, 200 queries over 10^5 lesson-like texts, CPU time, each library behind these vectors
and the same exact scoring of 100 candidates; the table is in ``docs/benchmarks.md``): the hashed
embeddings are weakly clustered, and a graph walk misses rows a probe of the cells finds. The scan's
top 10 came back in 87.5-92% of queries through the graphs at ef 400 (faiss HNSW, hnswlib,
usearch), in 200 / 200 through IVF-Flat with a sixteenth of the cells probed (p95 1.9 ms, built in
2.8 CPU-s; at 10^6, 200 / 200 too). IVF in L2 over the vectors padded to one norm was as exact
there and faster (p95 0.7 ms), but on short queries over 8,000 rows (the tests' set) it found the
scan's top 10 in 74% of queries where the inner product found 91%, and its padding needs every
``a`` at most 1 (no row touched after ``t_ref``). faiss is also the best kept of these (monthly
releases) and was already pinned.

Small stores keep the scan (``IndexParams.scan_below``): below it a scan costs about a millisecond
and is exact. Sans-I/O: arrays in, rows out, bytes for the caller to keep (``to_bytes``).
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from commons.core.learning import DAY
from commons.core.recall.scoring import RecallParams, normalised_strength, scores, top_k

FORMAT = 1  # of to_bytes(); a file of another format is rebuilt, not read
_EPS = 1e-6


class RecallIndexUsageError(ValueError):
    """The caller broke the index's contract (arrays that do not match what it was synced with)."""


class RecallIndexFileError(ValueError):
    """Bytes that are not an index this code can use (another format, other settings, damage)."""


@dataclass(frozen=True)
class IndexParams:
    # Lessons; below this recall scans (measured: a scan of 10^4 lessons, p50 0.35 ms; the index
    # saves a fraction of a millisecond there, not worth a build and a file).
    scan_below: int = 20_000
    cells_per_sqrt_row: float = 4.0  # IVF cells = 4·√n (faiss's rule of thumb)
    probe_fraction: float = 1 / 16  # share of the cells probed (measured: bench_recall_index.py)
    # ... but at least the cells holding this many rows: a small index's cells are few and coarse,
    # and probing 5,000 rows costs a tenth of a millisecond.
    probe_rows: int = 5_000
    candidates: int = 100  # rows the index returns, scored exactly
    train_per_cell: int = 40  # training sample per cell (faiss warns below 39)
    # t_ref is the build time; past this the index is rebuilt: rows touched since have a > 1, and
    # the further the rows' recency factors stray from the query's scale, the worse the cells the
    # query probes fit them (measured: t_ref 90 days off, 38 of 200 identical through L2 cells).
    horizon_days: float = 30.0
    refresh_after: int = 1024  # fresh rows before they are put in the index again
    regrow: float = 4.0  # rebuild (new cells) when the rows grow or shrink by this factor
    seed: int = 1

    def __post_init__(self) -> None:
        if min(self.scan_below, self.candidates, self.train_per_cell, self.refresh_after) < 1:
            raise ValueError("IndexParams: sizes must be positive")
        if not 0 < self.probe_fraction <= 1 or self.cells_per_sqrt_row <= 0 or self.regrow <= 1:
            raise ValueError("IndexParams: probe_fraction in (0, 1], cells_per_sqrt_row > 0, regrow > 1")
        if self.horizon_days <= 0:
            raise ValueError("IndexParams: horizon_days must be positive")


@dataclass(frozen=True)
class SyncResult:
    """What bringing the index up to date with the lessons did."""

    rows: int
    scanning: bool
    built: bool  # the index was made anew (first time past scan_below, horizon passed, regrown)
    added: int
    removed: int
    fresh: int
    reason: str  # why it was built, '' when it was not

    def to_json(self) -> dict:
        return {"rows": self.rows, "scanning": self.scanning, "built": self.built, "added": self.added,
                "removed": self.removed, "fresh": self.fresh, "reason": self.reason}


# The strengths of the rows, or a function of rows giving them (computed for the rows asked only).
Strength = np.ndarray | Callable[[np.ndarray], np.ndarray]


def _strength_of(strength: Strength) -> Callable[[np.ndarray], np.ndarray]:
    return strength if callable(strength) else (lambda rows: strength[rows])


def _checksum(vectors: np.ndarray) -> np.ndarray:
    """A number per row that changes when its embedding does (a fixed random projection)."""
    # float32, in place of the rows' own type: a float64 copy of 10^6 rows is 2 GB.
    probe = np.random.default_rng(20261201).standard_normal(vectors.shape[1]).astype(np.float32)
    return np.asarray(vectors, dtype=np.float32) @ probe


class RecallIndex:
    """The top k of a lesson matrix, through an IVF index of score-shaped vectors, when large.

    Rows are lessons, named by id; :meth:`sync` brings the index up to date with the ids and arrays
    the caller holds now (adds, removals, changed embeddings, changed priors), and :meth:`top_k`
    answers for exactly those arrays.
    """

    def __init__(self, params: RecallParams = RecallParams(), index_params: IndexParams = IndexParams(),
                 dim: int = 256) -> None:
        self.params, self.index_params, self.dim = params, index_params, dim
        self._ivf: Any = None  # faiss index, None while scanning
        self._t_ref = 0.0
        self._trained_rows = 0
        self._ids: list[str] = []  # key -> lesson id (keys are positions, never reused until a build)
        self._key_of: dict[str, int] = {}
        self._check = np.zeros(0)  # key -> embedding checksum
        self._a = np.zeros(0, dtype=np.float32)  # key -> the recency factor and strength its copy has
        self._b = np.zeros(0, dtype=np.float32)
        self._alive = np.zeros(0, dtype=bool)
        self._fresh: set[int] = set()  # keys
        self._row_of_key = np.zeros(0, dtype=np.int64)  # key -> row of the synced arrays, -1 if none
        self._key_of_row = np.zeros(0, dtype=np.int64)  # row -> key
        self._rows = 0
        self._synced = False

    def __len__(self) -> int:
        return self._rows

    @property
    def scanning(self) -> bool:
        return self._ivf is None

    @property
    def indexed(self) -> int:
        """Lessons the index holds (those of the last sync; those of its file before one)."""
        return int(self._alive.sum())

    # -- keeping it up to date ---------------------------------------------------------------------

    def sync(self, ids: Sequence[str], matrix: np.ndarray, touched: np.ndarray, strength: np.ndarray,
             now: float, progress: Callable[[str], None] | None = None) -> SyncResult:
        """Follow the caller's lessons as they are now: one row per id, in the caller's order."""
        self._check_arrays(matrix, touched, strength, len(ids))
        n, ip = len(ids), self.index_params
        reason = ""
        if n < ip.scan_below:
            self._drop()
        elif self._ivf is None:
            reason = f"{n} lessons, the index starts at {ip.scan_below}"
        elif now > self._t_ref + ip.horizon_days * DAY:
            reason = f"built over {ip.horizon_days:g} days ago (recency is folded into the vectors from then)"
        elif not self._trained_rows / ip.regrow <= n <= self._trained_rows * ip.regrow:
            reason = f"its cells were made for {self._trained_rows} lessons, there are {n}"
        if reason:
            self._build(ids, matrix, touched, strength, now, progress)
            return SyncResult(n, False, True, n, 0, 0, reason)
        self._rows, self._synced = n, True
        if self._ivf is None:
            return SyncResult(n, True, False, 0, 0, 0, "")
        keys = np.fromiter((self._key_of.get(i, -1) for i in ids), dtype=np.int64, count=n)
        known = np.flatnonzero(keys >= 0)
        moved = known[np.abs(_checksum(matrix[known]) - self._check[keys[known]]) > 1e-4]
        present = np.zeros(len(self._ids), dtype=bool)
        present[keys[known]] = True
        gone = np.flatnonzero(self._alive & ~present)
        self._remove(np.concatenate([gone, keys[moved]]))
        keys[moved] = -1
        new_rows = np.flatnonzero(keys < 0)
        keys[new_rows] = self._add([ids[r] for r in new_rows], matrix[new_rows], touched[new_rows],
                                   strength[new_rows], now)
        self._map_rows(keys)
        still = np.setdiff1d(known, moved, assume_unique=True)
        self._mark_fresh(keys[still], touched[still], strength[still])
        self._fresh = {k for k in self._fresh if self._row_of_key[k] >= 0}
        return SyncResult(n, False, False, len(new_rows), len(gone) + len(moved), len(self._fresh), "")

    def changed(self, rows: Sequence[int] | np.ndarray, matrix: np.ndarray, touched: np.ndarray,
                strength: Strength, now: float) -> None:
        """These rows' last touch or strength changed (a recall touched them, a verification came)."""
        strength_of = _strength_of(strength)
        self._check_arrays(matrix, touched, touched if callable(strength) else strength, self._rows)
        if self._ivf is None or not len(rows):
            return
        rows = np.asarray(rows, dtype=np.int64)
        keys = self._keys_of_rows(rows)
        self._mark_fresh(keys, touched[rows], strength_of(rows))
        if len(self._fresh) >= self.index_params.refresh_after:
            # Put them in again with their present values: they stop costing every query.
            fresh = np.fromiter(self._fresh, dtype=np.int64, count=len(self._fresh))
            fresh_rows = self._row_of_key[fresh]
            self._ivf.remove_ids(fresh)
            self._insert(fresh, matrix[fresh_rows], touched[fresh_rows], strength_of(fresh_rows))
            self._fresh.clear()

    def _map_rows(self, keys: np.ndarray) -> None:
        """``keys[row]`` is the key of each row of the synced arrays."""
        self._key_of_row = keys
        self._row_of_key = np.full(len(self._ids), -1, dtype=np.int64)
        self._row_of_key[keys] = np.arange(len(keys))

    def _keys_of_rows(self, rows: np.ndarray) -> np.ndarray:
        return self._key_of_row[rows]

    def _mark_fresh(self, keys: np.ndarray, touched: np.ndarray, strength: np.ndarray) -> None:
        """Keys whose copy in the index scores them lower than they score now."""
        a, b = self._prior_dims(touched, strength)
        lower = (a > self._a[keys] + _EPS) | (b > self._b[keys] + _EPS)
        self._fresh.update(int(k) for k in keys[lower])

    def _prior_dims(self, touched: np.ndarray, strength: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        exponent = (np.asarray(touched, dtype=np.float64) - self._t_ref) / (self.params.recency_half_life_days * DAY)
        a = np.exp2(exponent).astype(np.float32)
        return a, normalised_strength(strength).astype(np.float32)

    def _augment(self, matrix: np.ndarray, touched: np.ndarray, strength: np.ndarray) -> np.ndarray:
        out = np.empty((len(matrix), self.dim + 2), dtype=np.float32)
        out[:, : self.dim] = matrix
        out[:, self.dim], out[:, self.dim + 1] = self._prior_dims(touched, strength)
        return out

    def _build(self, ids: Sequence[str], matrix: np.ndarray, touched: np.ndarray, strength: np.ndarray,
               now: float, progress: Callable[[str], None] | None) -> None:
        faiss = _faiss()
        ip, n = self.index_params, len(ids)
        self._drop()
        self._t_ref = now
        cells = max(1, int(ip.cells_per_sqrt_row * math.sqrt(n)))
        if progress:
            progress(f"recall index: building over {n} lessons ({cells} cells); once, then kept beside the store")
        ivf = faiss.IndexIVFFlat(faiss.IndexFlatIP(self.dim + 2), self.dim + 2, cells, faiss.METRIC_INNER_PRODUCT)
        ivf.cp.seed = ip.seed
        ivf.cp.min_points_per_centroid = 1  # the sample is sized on purpose; no warning
        sample = np.random.default_rng(ip.seed).choice(n, min(n, ip.train_per_cell * cells), replace=False)
        sample.sort()
        ivf.train(self._augment(matrix[sample], touched[sample], strength[sample]))
        ivf.set_direct_map_type(faiss.DirectMap.Hashtable)  # removal by id without a scan of every cell
        ivf.nprobe = min(cells, max(math.ceil(ip.probe_fraction * cells), math.ceil(ip.probe_rows / n * cells)))
        self._ivf, self._trained_rows = ivf, n
        step = 50_000
        keys = np.concatenate([self._add(list(ids[i:i + step]), matrix[i:i + step], touched[i:i + step],
                                         strength[i:i + step], now)
                               for i in range(0, n, step)]) if n else np.zeros(0, dtype=np.int64)
        self._map_rows(keys)
        self._rows, self._synced = n, True
        if progress:
            progress(f"recall index: built over {n} lessons")

    def _add(self, ids: Sequence[str], matrix: np.ndarray, touched: np.ndarray, strength: np.ndarray,
             now: float) -> np.ndarray:
        keys = np.arange(len(self._ids), len(self._ids) + len(ids), dtype=np.int64)
        self._ids.extend(ids)
        self._key_of.update(zip(ids, keys.tolist()))
        self._check = np.concatenate([self._check, _checksum(matrix)])
        self._a = np.concatenate([self._a, np.zeros(len(ids), dtype=np.float32)])
        self._b = np.concatenate([self._b, np.zeros(len(ids), dtype=np.float32)])
        self._alive = np.concatenate([self._alive, np.ones(len(ids), dtype=bool)])
        self._insert(keys, matrix, touched, strength)
        return keys

    def _insert(self, keys: np.ndarray, matrix: np.ndarray, touched: np.ndarray, strength: np.ndarray) -> None:
        vectors = self._augment(matrix, touched, strength)
        self._a[keys], self._b[keys] = vectors[:, self.dim], vectors[:, self.dim + 1]
        self._ivf.add_with_ids(vectors, keys)

    def _remove(self, keys: np.ndarray) -> None:
        if not len(keys):
            return
        self._ivf.remove_ids(np.asarray(keys, dtype=np.int64))
        self._alive[keys] = False
        for k in keys.tolist():
            self._key_of.pop(self._ids[k], None)
            self._fresh.discard(k)

    def _drop(self) -> None:
        self._ivf, self._ids, self._key_of, self._fresh = None, [], {}, set()
        self._check, self._alive = np.zeros(0), np.zeros(0, dtype=bool)
        self._a = self._b = np.zeros(0, dtype=np.float32)
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
        then computed for the candidates only, not for every lesson in every query.
        """
        if not self._synced:
            raise RecallIndexUsageError("RecallIndex: sync() with the lessons before the first query")
        strength_of = _strength_of(strength)
        self._check_arrays(matrix, touched, touched if callable(strength) else strength, self._rows)
        wanted = max(self.index_params.candidates, 4 * k)
        if self._ivf is None or k <= 0 or wanted > self._rows // 10:
            return top_k(query_vec, matrix, touched, strength_of(np.arange(self._rows)), now, k, self.params)
        p, h = self.params, self.params.recency_half_life_days * DAY
        query = np.zeros((1, self.dim + 2), dtype=np.float32)
        query[0, : self.dim] = p.relevance_weight * query_vec
        query[0, self.dim] = p.recency_weight * math.exp2((self._t_ref - now) / h)
        query[0, self.dim + 1] = p.strength_weight
        _, found = self._ivf.search(query, wanted)
        keys = found[0][found[0] >= 0]
        if self._fresh:
            keys = np.union1d(keys, np.fromiter(self._fresh, dtype=np.int64, count=len(self._fresh)))
        rows = self._row_of_key[keys]
        rows = np.unique(rows[rows >= 0])
        s = scores(query_vec, matrix[rows], touched[rows], strength_of(rows), now, self.params)
        best = np.lexsort((rows, -s))[:k]  # best first, ties by lower row: as top_k
        return [(int(rows[i]), float(s[i])) for i in best]

    # -- keeping it between processes --------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """Everything :meth:`from_bytes` needs to answer again without a build (no pickle)."""
        faiss = _faiss()
        meta = {"format": FORMAT, "dim": self.dim, "t_ref": self._t_ref, "trained_rows": self._trained_rows,
                "params": _params_key(self.params, self.index_params)}
        arrays: dict[str, np.ndarray] = {"meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)}
        if self._ivf is not None:
            arrays.update(ivf=faiss.serialize_index(self._ivf), ids=np.array([i.encode() for i in self._ids], dtype=np.bytes_),
                          check=self._check, a=self._a, b=self._b, alive=self._alive,
                          fresh=np.fromiter(self._fresh, dtype=np.int64, count=len(self._fresh)))
        out = io.BytesIO()
        np.savez(out, **arrays)
        return out.getvalue()

    @classmethod
    def from_bytes(cls, data: bytes, params: RecallParams = RecallParams(),
                   index_params: IndexParams = IndexParams(), dim: int = 256) -> "RecallIndex":
        """An index kept by :meth:`to_bytes`; :meth:`sync` it with the lessons before a query."""
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
                meta = json.loads(arrays["meta"].tobytes())
                found = {name: arrays[name] for name in arrays.files}
        except Exception as error:  # numpy and zipfile raise many kinds for damaged bytes
            raise RecallIndexFileError(f"not a recall index ({type(error).__name__}: {error})") from None
        if meta.get("format") != FORMAT or meta.get("dim") != dim:
            raise RecallIndexFileError(f"a recall index of format {meta.get('format')}, dimension {meta.get('dim')}; "
                                       f"this code reads format {FORMAT}, dimension {dim}")
        if meta.get("params") != _params_key(params, index_params):
            raise RecallIndexFileError("a recall index made with other recall or index settings")
        index = cls(params, index_params, dim)
        if "ivf" in found:
            index._ivf = _faiss().deserialize_index(found["ivf"])
            index._t_ref, index._trained_rows = float(meta["t_ref"]), int(meta["trained_rows"])
            index._ids = [i.decode() for i in found["ids"].tolist()]
            index._check, index._a, index._b = found["check"], found["a"], found["b"]
            index._alive = found["alive"].astype(bool)
            index._key_of = {index._ids[k]: k for k in np.flatnonzero(index._alive).tolist()}
            index._fresh = set(found["fresh"].tolist())
            if not (len(index._ids) == len(index._check) == len(index._a) == len(index._b) == len(index._alive)):
                raise RecallIndexFileError("a recall index whose arrays disagree in length (damaged)")
        return index


def _faiss() -> Any:
    """faiss, loaded only by stores past scan_below, on one thread: a query is too small to share,
    and OpenMP's idle workers spin (measured: p95 2.2 ms on one thread, 6.8 ms on two, CPU time)."""
    import faiss

    faiss.omp_set_num_threads(1)
    return faiss


def _params_key(params: RecallParams, index_params: IndexParams) -> list:
    """The settings an index's vectors and cells depend on: another set means another index."""
    return [params.relevance_weight, params.recency_weight, params.strength_weight, params.recency_half_life_days,
            index_params.cells_per_sqrt_row, index_params.probe_fraction, index_params.probe_rows, index_params.horizon_days,
            index_params.seed]
