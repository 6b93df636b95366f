"""Half-open connection caps: counted globally and per address, released when the handshake ends."""

from __future__ import annotations

import functools
import socket

import nacl.signing
import pytest
import trio

from commons.net import admission
from commons.net.admission import HalfOpenCaps, HalfOpenLimit, HalfOpenRefused, HalfOpenUsageError
from commons.net.transport import PeerFailed, dial, handshake_as_server

NETWORK = b"\x05" * 32


def test_the_per_address_cap_refuses_one_address_while_others_still_get_in():
    limit = HalfOpenLimit(HalfOpenCaps(total=10, per_address=2))
    first, _ = limit.enter("192.0.2.1"), limit.enter("192.0.2.1")
    with pytest.raises(HalfOpenRefused, match="192.0.2.1"):
        limit.enter("192.0.2.1")
    limit.enter("192.0.2.2")
    limit.leave(first)
    limit.enter("192.0.2.1")
    assert limit.refused == 1 and limit.dropped == 0


def test_a_full_global_cap_drops_the_oldest_handshake_for_a_newcomer_and_nothing_is_kept_after():
    now = [0.0]
    limit = HalfOpenLimit(HalfOpenCaps(total=3, per_address=3), clock=lambda: now[0])
    dropped: list[int] = []
    entries = []
    for n in range(3):
        entries.append(limit.enter(f"192.0.2.{n}", functools.partial(dropped.append, n)))
        now[0] += 1
    newcomer = limit.enter("198.51.100.7", functools.partial(dropped.append, 7))
    assert dropped == [0] and limit.total == 3 and limit.dropped == 1 and limit.refused == 0
    limit.enter("198.51.100.8", functools.partial(dropped.append, 8))
    assert dropped == [0, 1]  # oldest first, the newcomer untouched
    for entry in (*entries, newcomer):
        limit.leave(entry)  # a dropped one's leave (when its task unwinds) is a no-op
    assert limit.total == 1 and limit.addresses() == 1
    with pytest.raises(HalfOpenUsageError):
        limit.leave(admission.HalfOpen("192.0.2.9", 0.0, lambda: None))


def test_refusals_are_logged_once_per_interval_with_their_count(caplog):
    now = [0.0]
    limit = HalfOpenLimit(HalfOpenCaps(total=10, per_address=1), clock=lambda: now[0])
    limit.enter("192.0.2.1")
    with caplog.at_level("WARNING", logger="commons.net"):
        for _ in range(5):
            with pytest.raises(HalfOpenRefused):
                limit.enter("192.0.2.1")
        now[0] = admission.WARN_SECONDS
        with pytest.raises(HalfOpenRefused):
            limit.enter("192.0.2.1")
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 2 and "(5 refused or dropped since the last warning" in warnings[1]


def handshakes(limit: HalfOpenLimit, server_seed: bytes, done: list[str]):
    """A listener's handler: serve the handshake under ``limit``, noting "ok" or why it failed."""
    async def handler(stream: trio.SocketStream) -> None:
        try:
            link = await handshake_as_server(stream, network_key=NETWORK, seed=server_seed, half_open=limit)
        except PeerFailed as error:
            done.append(str(error))
            return
        done.append("ok")
        await link.aclose()

    return handler


async def test_connections_over_the_cap_are_closed_unread_while_a_real_handshake_gets_through():
    server_seed, client_seed = b"\x01" * 32, b"\x02" * 32
    server_key = bytes(nacl.signing.SigningKey(server_seed).verify_key)
    limit = HalfOpenLimit(HalfOpenCaps(total=100, per_address=3))
    done: list[str] = []

    handler = handshakes(limit, server_seed, done)
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(functools.partial(trio.serve_tcp, handler, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        silent = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]  # they never speak
        with trio.fail_after(5):
            while limit.total < 3:
                await trio.sleep(0.01)
        extra = socket.create_connection(("127.0.0.1", port))
        with trio.fail_after(5):
            while limit.refused < 1:
                await trio.sleep(0.01)
        extra.settimeout(5)
        assert await trio.to_thread.run_sync(extra.recv, 1) == b""  # closed by the listener without a word
        for s in silent:
            s.close()
        with trio.fail_after(5):
            while limit.total:
                await trio.sleep(0.01)
        link = await dial("127.0.0.1", port, network_key=NETWORK, seed=client_seed, server_key=server_key)
        await link.aclose()
        with trio.fail_after(5):
            while "ok" not in done:
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    assert limit.total == 0 and limit.addresses() == 0
    assert any("cap per address" in reason for reason in done)


async def test_a_newcomer_gets_its_handshake_while_silent_connections_fill_the_whole_cap():
    server_seed, client_seed = b"\x01" * 32, b"\x02" * 32
    server_key = bytes(nacl.signing.SigningKey(server_seed).verify_key)
    limit = HalfOpenLimit(HalfOpenCaps(total=4, per_address=8))  # the global cap binds first
    done: list[str] = []

    handler = handshakes(limit, server_seed, done)
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(functools.partial(trio.serve_tcp, handler, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        silent = []
        for _ in range(4):  # one at a time, so that which is oldest is known
            silent.append(socket.create_connection(("127.0.0.1", port)))
            with trio.fail_after(5):
                while limit.total < len(silent):
                    await trio.sleep(0.01)
        with trio.fail_after(5):  # bounds a hang; the handshake itself takes milliseconds
            link = await dial("127.0.0.1", port, network_key=NETWORK, seed=client_seed, server_key=server_key)
        await link.aclose()
        silent[0].settimeout(5)
        assert await trio.to_thread.run_sync(silent[0].recv, 1) == b""  # the oldest was dropped
        assert limit.dropped == 1 and limit.refused == 0
        for s in silent:
            s.close()
        with trio.fail_after(5):
            while limit.total or "ok" not in done:
                await trio.sleep(0.01)
        nursery.cancel_scope.cancel()
    assert any("dropped before the end of its handshake" in reason for reason in done)
