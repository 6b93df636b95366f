"""A first-in, first-out queue of fixed-size keys in one buffer (no object per key).

A gossip session holds up to 2^20 keys a reconciliation named and not yet fetched (its spill),
and as many it was told to push: as Python ``bytes`` objects that would be ~66 bytes a key plus a
list slot, in one ``bytearray`` it is the key's 33 bytes. Keys are appended end to end and taken
from the front (CPython's ``bytearray`` moves its start on a deletion from the front instead of
copying what follows, so taking is proportional to what is taken).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from commons.core.gossip.messages import GossipUsageError


class KeyQueue:
    """Keys of ``key_size`` bytes each, first in, first out (mutable: one per use in a session)."""

    __slots__ = ("_buffer", "_size")

    def __init__(self, key_size: int) -> None:
        if key_size <= 0:
            raise GossipUsageError(f"a key queue needs a positive key size, not {key_size}")
        self._buffer = bytearray()
        self._size = key_size

    def __len__(self) -> int:
        """How many keys wait."""
        return len(self._buffer) // self._size

    def __bool__(self) -> bool:
        return bool(self._buffer)

    def __bytes__(self) -> bytes:
        """The keys as they are held: end to end, oldest first."""
        return bytes(self._buffer)

    def __iter__(self) -> Iterator[bytes]:
        size, buffer = self._size, self._buffer
        return (bytes(buffer[i : i + size]) for i in range(0, len(buffer), size))

    def append(self, key: bytes) -> None:
        self._check(key)
        self._buffer += key

    def extend(self, keys: Iterable[bytes]) -> None:
        """Append every key, in order (a wrong-sized key leaves the queue as it was)."""
        keys = list(keys)
        for key in keys:
            self._check(key)
        self._buffer += b"".join(keys)

    def pop(self) -> bytes:
        """The oldest key, taken off the queue."""
        if not self._buffer:
            raise IndexError("pop from an empty key queue")
        size = self._size
        key = bytes(self._buffer[:size])
        del self._buffer[:size]
        return key

    def take(self, count: int) -> list[bytes]:
        """Up to ``count`` of the oldest keys, taken off the queue, oldest first."""
        size = self._size
        taken = self._buffer[: max(count, 0) * size]
        del self._buffer[: len(taken)]
        return [bytes(taken[i : i + size]) for i in range(0, len(taken), size)]

    def clear(self) -> None:
        self._buffer = bytearray()  # a new buffer: a cleared one keeps its allocation

    def _check(self, key: bytes) -> None:
        if len(key) != self._size:
            raise GossipUsageError(f"a key of {len(key)} bytes in a queue of {self._size}-byte keys")
