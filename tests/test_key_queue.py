"""The key queue behind a session's spill and push buffer: keys end to end, first in, first out."""

import sys

import pytest

from commons.core.gossip.messages import GossipUsageError
from commons.core.gossip.key_queue import KeyQueue


def keys(n: int, start: int = 0) -> list[bytes]:
    return [bytes([1]) + i.to_bytes(32, "big") for i in range(start, start + n)]


def test_keys_come_out_in_the_order_they_went_in():
    q = KeyQueue(33)
    q.extend(keys(5))
    q.append(keys(1, 5)[0])
    assert len(q) == 6 and q.pop() == keys(1)[0]
    assert q.take(3) == keys(3, 1) and list(q) == keys(2, 4)


def test_the_buffer_holds_the_keys_end_to_end_oldest_first():
    q = KeyQueue(33)
    q.extend(keys(3))
    assert bytes(q) == b"".join(keys(3))
    q.pop()
    assert bytes(q) == b"".join(keys(2, 1))


def test_take_beyond_what_waits_returns_what_there_is_and_empties_the_queue():
    q = KeyQueue(33)
    q.extend(keys(4))
    assert q.take(10) == keys(4) and not q and len(q) == 0
    assert q.take(1) == [] and q.take(-1) == []


def test_pop_from_an_empty_queue_is_an_index_error():
    with pytest.raises(IndexError):
        KeyQueue(33).pop()


def test_a_key_of_another_size_is_refused_and_the_queue_stays_as_it_was():
    q = KeyQueue(33)
    q.extend(keys(2))
    with pytest.raises(GossipUsageError, match="32 bytes"):
        q.extend([keys(1)[0], b"x" * 32])
    with pytest.raises(GossipUsageError):
        q.append(b"")
    assert list(q) == keys(2)


def test_clear_empties_the_queue_and_gives_its_memory_back():
    q = KeyQueue(33)
    q.extend(keys(10_000))
    q.clear()
    assert not q and sys.getsizeof(q._buffer) < 100


def test_a_queue_of_many_keys_costs_about_their_bytes():
    q = KeyQueue(33)
    q.extend(keys(100_000))
    assert sys.getsizeof(q._buffer) < 1.1 * 33 * 100_000  # no object per key
