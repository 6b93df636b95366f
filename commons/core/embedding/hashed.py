"""Hashed word-and-bigram embeddings (design paper §4.4): 256 dimensions, no model.

A text becomes a bag of features — its words and its adjacent-word bigrams — and each feature is
hashed with BLAKE3 into one of ``DIM`` buckets with a sign (the signed "hashing trick", so that
collisions cancel on average instead of piling up). The vector is L2-normalised, so the cosine of
two embeddings is their dot product.

BLAKE3, not Python's ``hash()``: ``hash()`` of a str is salted per process, and these vectors are
compared across nights, stored, and recomputed on other machines. The same text gives the same
bytes everywhere.

The tokenizer is tuned for coding sessions: it lowercases, splits on anything that is not a word
character, but keeps together what a developer would read as one name — ``pytest-asyncio``,
``3.12``, ``--no-cache-dir``, ``apt-get``, ``node_modules`` — and keeps error words. A few
function words are dropped: with 256 buckets, "the" and "to" shared by every sentence would make
unrelated texts look alike.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence

import blake3
import numpy as np

DIM = 256
BIGRAM_WEIGHT = 0.7  # a bigram is evidence of phrasing, worth a bit less than a word of its own
PART_WEIGHT = 0.5  # the parts of a compound name ("pytest" in "pytest-asyncio")
_DOMAIN = b"commons/embed/v1\x00"

# A flag (-x, --no-deps), or a word with inner joiners (. - + /) between word characters: keeps
# versions, dotted modules and hyphenated tool names in one piece, drops trailing punctuation.
_TOKEN = re.compile(r"--?[a-z0-9][a-z0-9_-]*|[a-z0-9_]+(?:[.+\-][a-z0-9_]+)*")

STOPWORDS = frozenset(
    "a an the of to in on at by for from and or as is are was were be been it its this that "
    "these those with into i i'll we you he she they them his her our your their".split()
)


def tokenize(text: str) -> list[str]:
    """The meaningful lowercase tokens of ``text``, in order, function words dropped."""
    return [t for t in _TOKEN.findall(text.lower()) if t not in STOPWORDS]


@functools.lru_cache(maxsize=1 << 18)
def _slot(feature: str) -> tuple[int, float]:
    # Memoised because a night embeds the same few thousand words over and over; the cache is a
    # pure function of its argument, so it changes no result.
    digest = blake3.blake3(_DOMAIN + feature.encode("utf-8")).digest(length=8)
    value = int.from_bytes(digest, "little")
    return value % DIM, (1.0 if (value >> 63) & 1 else -1.0)


def _features(text: str) -> Iterable[tuple[str, float]]:
    tokens = tokenize(text)
    for tok in tokens:
        yield tok, 1.0
        if "-" in tok and not tok.startswith("-"):
            for part in tok.split("-"):
                if len(part) > 1 and part.isalpha():
                    yield part, PART_WEIGHT
    for first, second in zip(tokens, tokens[1:]):
        yield first + " " + second, BIGRAM_WEIGHT


def _accumulate(text: str) -> dict[int, float]:
    acc: dict[int, float] = {}
    for feature, weight in _features(text):
        index, sign = _slot(feature)
        acc[index] = acc.get(index, 0.0) + sign * weight
    return acc


def embed(text: str) -> np.ndarray:
    """The unit-length float32 embedding of ``text`` (all zeros for a text with no tokens)."""
    return embed_many([text])[0]


def embed_many(texts: Sequence[str]) -> np.ndarray:
    """Embeddings of ``texts`` as an ``(n, DIM)`` float32 matrix, one unit row per text."""
    if isinstance(texts, str):
        raise TypeError("embed_many() takes a sequence of texts, not one str (use embed())")
    out = np.zeros((len(texts), DIM), dtype=np.float32)
    seen: dict[str, int] = {}  # identical texts (the same error line, again) are embedded once
    for row, text in enumerate(texts):
        first = seen.get(text)
        if first is not None:
            out[row] = out[first]
            continue
        seen[text] = row
        acc = _accumulate(text)
        if acc:
            out[row, list(acc.keys())] = list(acc.values())
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norms, out=out, where=norms > 0)
    return out


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two vectors; 0.0 when either is all zeros."""
    na = float(np.linalg.norm(a))
    nb = float(np.linalg.norm(b))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(np.dot(a, b) / (na * nb))
