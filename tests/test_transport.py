"""The trio transport: handshake and box-stream over real streams."""

from functools import partial

import nacl.signing
import pytest
import trio
import trio.testing

from commons.net.transport import PeerFailed, dial, handshake_as_client, handshake_as_server

NETWORK = bytes(range(32))
CLIENT_SEED = bytes([1]) * 32
SERVER_SEED = bytes([2]) * 32
SERVER_KEY = bytes(nacl.signing.SigningKey(SERVER_SEED).verify_key)
CLIENT_KEY = bytes(nacl.signing.SigningKey(CLIENT_SEED).verify_key)


async def test_payloads_cross_both_ways_and_each_side_knows_the_other():
    left, right = trio.testing.memory_stream_pair()
    links = {}

    async def server():
        links["server"] = await handshake_as_server(right, network_key=NETWORK, seed=SERVER_SEED)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(server)
        links["client"] = await handshake_as_client(left, network_key=NETWORK, seed=CLIENT_SEED, server_key=SERVER_KEY)
    assert links["server"].remote_key == CLIENT_KEY and links["client"].remote_key == SERVER_KEY
    await links["client"].send(b"hello")
    assert await links["server"].receive() == b"hello"
    big = bytes(range(256)) * 40
    await links["server"].send(big)
    received = b""
    while len(received) < len(big):
        received += await links["client"].receive()
    assert received == big
    await links["client"].aclose()
    assert await links["server"].receive() == b""


async def test_wrong_network_key_is_refused_without_an_answer():
    left, right = trio.testing.memory_stream_pair()
    outcome = {}

    async def server():
        with pytest.raises(PeerFailed, match="wrong-network"):
            await handshake_as_server(right, network_key=NETWORK, seed=SERVER_SEED)
        outcome["refused"] = True

    async with trio.open_nursery() as nursery:
        nursery.start_soon(server)
        with pytest.raises(PeerFailed, match="closed the connection during the handshake"):
            await handshake_as_client(left, network_key=bytes(32), seed=CLIENT_SEED, server_key=SERVER_KEY)
    assert outcome["refused"]


async def test_unauthorized_client_is_refused():
    left, right = trio.testing.memory_stream_pair()

    async def server():
        with pytest.raises(PeerFailed, match="unauthorized"):
            await handshake_as_server(right, network_key=NETWORK, seed=SERVER_SEED, authorize=lambda key: False)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(server)
        with pytest.raises(PeerFailed):
            await handshake_as_client(left, network_key=NETWORK, seed=CLIENT_SEED, server_key=SERVER_KEY)


async def test_silent_peer_times_out_the_handshake(autojump_clock):
    left, _right = trio.testing.memory_stream_pair()
    with pytest.raises(PeerFailed, match="longer than"):
        await handshake_as_server(left, network_key=NETWORK, seed=SERVER_SEED)


async def test_dial_over_loopback_tcp():
    async def handler(stream):
        link = await handshake_as_server(stream, network_key=NETWORK, seed=SERVER_SEED)
        await link.send(await link.receive())
        await link.aclose()

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, handler, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        link = await dial("127.0.0.1", port, network_key=NETWORK, seed=CLIENT_SEED, server_key=SERVER_KEY)
        await link.send(b"echo")
        assert await link.receive() == b"echo"
        await link.aclose()
        nursery.cancel_scope.cancel()


async def test_dialing_a_closed_port_says_it_cannot_reach():
    with pytest.raises(PeerFailed, match="cannot reach 127.0.0.1:1"):
        await dial("127.0.0.1", 1, network_key=NETWORK, seed=CLIENT_SEED, server_key=SERVER_KEY)
