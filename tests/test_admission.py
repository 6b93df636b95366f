"""Half-open connection caps: counted globally and per address, released when the handshake ends."""

from __future__ import annotations

import functools
import socket

import nacl.signing
import pytest
import trio

from commons.net import admission
from commons.net.admission import HalfOpenCaps, HalfOpenLimit, HalfOpenUsageError
from commons.net.transport import PeerFailed, dial, handshake_as_server

NETWORK = b"\x05" * 32


def test_the_per_address_cap_refuses_one_address_while_others_still_get_in():
    limit = HalfOpenLimit(HalfOpenCaps(total=10, per_address=2))
    assert limit.enter("192.0.2.1") is None and limit.enter("192.0.2.1") is None
    assert "192.0.2.1" in limit.enter("192.0.2.1")
    assert limit.enter("192.0.2.2") is None
    limit.leave("192.0.2.1")
    assert limit.enter("192.0.2.1") is None
    assert limit.refused == 1


def test_the_global_cap_refuses_everyone_until_a_handshake_ends_and_nothing_is_kept_after():
    limit = HalfOpenLimit(HalfOpenCaps(total=3, per_address=3))
    for n in range(3):
        assert limit.enter(f"192.0.2.{n}") is None
    assert "all peers" in limit.enter("192.0.2.9")
    for n in range(3):
        limit.leave(f"192.0.2.{n}")
    assert limit.total == 0 and limit.addresses() == 0
    with pytest.raises(HalfOpenUsageError):
        limit.leave("192.0.2.0")


def test_refusals_are_logged_once_per_interval_with_their_count(caplog):
    now = [0.0]
    limit = HalfOpenLimit(HalfOpenCaps(total=1, per_address=1), clock=lambda: now[0])
    limit.enter("192.0.2.1")
    with caplog.at_level("WARNING", logger="commons.net"):
        for _ in range(5):
            limit.enter("192.0.2.1")
        now[0] = admission.WARN_SECONDS
        limit.enter("192.0.2.1")
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 2 and "(5 refused since the last warning" in warnings[1]


async def test_connections_over_the_cap_are_closed_unread_while_a_real_handshake_gets_through():
    server_seed, client_seed = b"\x01" * 32, b"\x02" * 32
    server_key = bytes(nacl.signing.SigningKey(server_seed).verify_key)
    limit = HalfOpenLimit(HalfOpenCaps(total=100, per_address=3))
    done: list[str] = []

    async def handler(stream: trio.SocketStream) -> None:
        try:
            link = await handshake_as_server(stream, network_key=NETWORK, seed=server_seed, half_open=limit)
        except PeerFailed as error:
            done.append(str(error))
            return
        done.append("ok")
        await link.aclose()

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
