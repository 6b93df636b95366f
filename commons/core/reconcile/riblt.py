"""Rateless invertible Bloom lookup table coded symbols (reconciliation version 4).

After Yang, Gilad and Alizadeh, "Practical Rateless Set Reconciliation" (SIGCOMM 2024): a set of
items is encoded as an endless stream of *coded symbols*. Symbol ``i`` holds the XOR of the items
mapped to it, the XOR of their hashes, and how many they are; an item is mapped to symbol 0 and then
to a sparser and sparser run of later symbols, so that it lands in symbol ``i`` with probability
about ``1 / (1 + i/2)``. Subtracting a peer's first ``m`` symbols from one's own leaves the symbols of
the *difference* of the two sets; when ``m`` is about 1.35-2 times the difference's size, peeling
(take a symbol that holds exactly one item, remove that item everywhere, repeat) recovers every
item of the difference and which side holds it. Nothing depends on where the differences lie in
item order: a newest thousand records of one day cost what a thousand scattered over a year cost.

Every symbol is 37 bytes of item sum, 8 bytes of hash sum and its count modulo 256
(``protocol/reconcile.md``, version 4). Hashes are salted by the session (``salt``): an item's
cells and checksum cannot be chosen ahead of a session, so records cannot be ground to collide.

Encoding is vectorised with numpy over the items (a set of 10^6 items and 3,000 symbols is about
40 item-steps each); decoding peels in Python over the difference only. Sans-I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from commons.core.reconcile.keyset import ITEM_SIZE, ReconcileProtocolError

WORDS = 5  # an item as 64-bit words: 37 bytes, zero-padded to 40
_PADDED = 8 * WORDS
SYMBOL_SUM_SIZE = ITEM_SIZE
CHECKSUM_SIZE = 8
MASK64 = (1 << 64) - 1
_MIX1, _MIX2 = 0xBF58476D1CE4E5B9, 0x94D049BB133111EB  # SplitMix64's finaliser
MAPPING_MULTIPLIER = 0xDA942042E4DD58B5  # the mapping's PRNG step, as in the paper's reference


def items_to_words(items: bytes) -> np.ndarray:
    """Items laid end to end (37 bytes each) as an (n, 5) array of little-endian 64-bit words."""
    n = len(items) // ITEM_SIZE
    padded = np.zeros((n, _PADDED), dtype=np.uint8)
    padded[:, :ITEM_SIZE] = np.frombuffer(items, dtype=np.uint8, count=n * ITEM_SIZE).reshape(n, ITEM_SIZE)
    return padded.view("<u8").reshape(n, WORDS)


def _mix_array(z: np.ndarray) -> np.ndarray:
    z = (z ^ (z >> np.uint64(30))) * np.uint64(_MIX1)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(_MIX2)
    return z ^ (z >> np.uint64(31))


def mix64(z: int) -> int:
    """SplitMix64's finaliser on one 64-bit integer (the scalar twin of the vectorised one)."""
    z = ((z ^ (z >> 30)) * _MIX1) & MASK64
    z = ((z ^ (z >> 27)) * _MIX2) & MASK64
    return z ^ (z >> 31)


def hash_words(words: np.ndarray, salt: int) -> np.ndarray:
    """Each item's salted 64-bit hash: h = salt, then h = mix64(h XOR word) for its 5 words."""
    h = np.full(len(words), salt, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(WORDS):
            h = _mix_array(h ^ words[:, j])
    return h


def hash_item(item: bytes, salt: int) -> int:
    """The salted hash of one 37-byte item (as ``hash_words``)."""
    padded = item.ljust(_PADDED, b"\0")
    h = salt
    for j in range(WORDS):
        h = mix64(h ^ int.from_bytes(padded[8 * j : 8 * j + 8], "little"))
    return h


def next_index(index: int, state: int) -> tuple[int, int]:
    """The symbol an item maps to after ``index``, and the mapping's next PRNG state.

    ``state' = state * MULTIPLIER mod 2^64``; the gap is
    ``max(1, ceil((index + 1.5) * (2^32 / sqrt(float(state') + 1) - 1)))`` in IEEE double arithmetic,
    so that an item lands in symbol i with probability about 1 / (1 + i/2)."""
    state = (state * MAPPING_MULTIPLIER) & MASK64
    gap = math.ceil((index + 1.5) * (4294967296.0 / math.sqrt(float(state) + 1.0) - 1.0))
    return index + max(1, gap), state


def item_indices(h: int, end: int) -> list[int]:
    """Every symbol below ``end`` an item with hash ``h`` maps to (the first is always 0)."""
    out, index, state = [], 0, h
    while index < end:
        out.append(index)
        index, state = next_index(index, state)
    return out


@dataclass
class Symbols:
    """Coded symbols ``start .. start + len - 1`` of a set (mutable: a decoder subtracts into it).

    ``sums``: (m, 5) uint64 XOR of the items' words; ``checksums``: (m,) uint64 XOR of their hashes;
    ``counts``: (m,) int64, how many items (a difference: how many more on the peer's side)."""

    start: int
    sums: np.ndarray
    checksums: np.ndarray
    counts: np.ndarray

    def __len__(self) -> int:
        return len(self.counts)

    @classmethod
    def empty(cls, start: int, count: int) -> Symbols:
        return cls(start, np.zeros((count, WORDS), dtype=np.uint64), np.zeros(count, dtype=np.uint64),
                   np.zeros(count, dtype=np.int64))

    def extend(self, more: Symbols) -> None:
        if more.start != self.start + len(self):
            raise ReconcileProtocolError(f"coded symbols from {more.start}, expected {self.start + len(self)}")
        self.sums = np.concatenate([self.sums, more.sums])
        self.checksums = np.concatenate([self.checksums, more.checksums])
        self.counts = np.concatenate([self.counts, more.counts])


def encode(words: np.ndarray, hashes: np.ndarray, start: int, end: int) -> Symbols:
    """Coded symbols ``start .. end - 1`` of the items (``words``, with their ``hashes``)."""
    out = Symbols.empty(start, max(0, end - start))
    if end <= start or not len(words):
        return out
    index = np.zeros(len(words), dtype=np.float64)  # exact: indices stay below 2^53
    state = hashes.copy()
    live = np.arange(len(words))
    multiplier = np.uint64(MAPPING_MULTIPLIER)
    with np.errstate(over="ignore"):
        while live.size:
            at = index[live]
            hit = live[at >= start]
            if hit.size:
                cells = index[hit].astype(np.int64) - start
                for j in range(WORDS):
                    np.bitwise_xor.at(out.sums[:, j], cells, words[hit, j])
                np.bitwise_xor.at(out.checksums, cells, hashes[hit])
                np.add.at(out.counts, cells, 1)
            state[live] = state[live] * multiplier
            gap = np.ceil((at + 1.5) * (4294967296.0 / np.sqrt(state[live].astype(np.float64) + 1.0) - 1.0))
            index[live] = at + np.maximum(gap, 1.0)
            live = live[index[live] < end]
    return out


def subtract(theirs: Symbols, words: np.ndarray, hashes: np.ndarray) -> Symbols:
    """The peer's symbols minus mine over the same indices: the symbols of the difference
    (count +1: an item only the peer holds; -1: only I hold)."""
    mine = encode(words, hashes, theirs.start, theirs.start + len(theirs))
    return Symbols(theirs.start, theirs.sums ^ mine.sums, theirs.checksums ^ mine.checksums,
                   wrap_count(theirs.counts - mine.counts))


def wrap_count(counts):
    """Counts modulo 256 as signed bytes (-128 .. 127): a symbol carries its count modulo 256, which
    is all peeling needs (a pure symbol also passes its checksum, an empty one has zero sums)."""
    return ((counts + 128) & 255) - 128


def words_to_item(words: tuple[int, ...] | list[int]) -> bytes:
    return b"".join(int(w).to_bytes(8, "little") for w in words)[:ITEM_SIZE]


def peel(diff: Symbols, salt: int, max_items: int) -> tuple[list[bytes], list[bytes]] | None:
    """Recover the difference from its symbols (which must start at 0): (only the peer's, only
    mine) items, or None if these symbols do not suffice yet. At most ``max_items`` items are
    recovered: past that the symbols are not a difference of two honest sets (the peer's fault)."""
    if diff.start != 0:
        raise ValueError("peeling needs the symbols from index 0")
    m = len(diff)
    sums = [list(map(int, row)) for row in diff.sums.tolist()]
    checks = [int(c) for c in diff.checksums.tolist()]
    counts = [int(c) for c in diff.counts.tolist()]
    theirs: list[bytes] = []
    mine: list[bytes] = []
    pad = b"\0" * (_PADDED - ITEM_SIZE)

    def pure(i: int) -> bool:
        if counts[i] not in (1, -1):
            return False
        row = sums[i]
        if row[WORDS - 1] >> 8 * (ITEM_SIZE - 8 * (WORDS - 1)):  # the padding bytes must be zero
            return False
        return hash_item(words_to_item(row), salt) == checks[i]

    queue = [i for i in range(m) if pure(i)]
    while queue:
        i = queue.pop()
        if not pure(i):
            continue
        sign = counts[i]
        row = list(sums[i])
        item = words_to_item(row)
        (theirs if sign == 1 else mine).append(item)
        if len(theirs) + len(mine) > max_items:
            raise ReconcileProtocolError(f"coded symbols decode to more than {max_items} items")
        h = checks[i]
        padded = item + pad
        words = [int.from_bytes(padded[8 * j : 8 * j + 8], "little") for j in range(WORDS)]
        for j in item_indices(h, m):
            cell = sums[j]
            for w in range(WORDS):
                cell[w] ^= words[w]
            checks[j] ^= h
            counts[j] = ((counts[j] - sign + 128) & 255) - 128
            if pure(j):
                queue.append(j)
    if any(counts) or any(checks) or any(any(row) for row in sums):
        return None
    return theirs, mine


def difference_size(diff: Symbols) -> float:
    """The most likely size of the difference behind these (subtracted, not yet peeled) symbols,
    from which of them are empty: symbol i is empty with probability (1 - 1/(1 + i/2))^d. Sharp once
    the symbols number a fair share of d (a failed batch is such a share); ``inf`` when none is empty."""
    m = len(diff)
    if m < 2:
        return float("inf")
    empty = (diff.counts == 0) & (diff.checksums == 0) & ~diff.sums.any(axis=1)
    index = np.arange(diff.start, diff.start + m, dtype=np.float64)
    share = 1.0 / (1.0 + index / 2.0)  # symbol 0 holds every item: never empty, tells nothing
    keep = np.log1p(-share[share < 1.0])
    empty = empty[share < 1.0]
    if not empty.any():
        return float("inf")
    grid = np.unique(np.round(np.geomspace(1, 64.0 * (m + 16), 1200)))
    log_keep = grid[:, None] * keep[None, :]
    with np.errstate(divide="ignore"):
        log_change = np.nan_to_num(np.log(-np.expm1(log_keep)), neginf=-1e300)
    likelihood = np.where(empty[None, :], log_keep, log_change).sum(axis=1)
    return float(grid[int(np.argmax(likelihood))])


# -- wire form ------------------------------------------------------------------------------------


def symbol_bytes(symbols: Symbols) -> list[bytes]:
    """Each symbol as sent: its 37-byte sum, 8-byte little-endian checksum, count modulo 256 (1 byte)."""
    sums = symbols.sums.astype("<u8").view(np.uint8).reshape(len(symbols), _PADDED)[:, :ITEM_SIZE]
    checks = symbols.checksums.astype("<u8").view(np.uint8).reshape(len(symbols), CHECKSUM_SIZE)
    return [s.tobytes() + c.tobytes() + bytes([n & 255]) for s, c, n in zip(sums, checks, symbols.counts.tolist())]
