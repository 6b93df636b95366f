"""Secret Handshake v1 state machines: complete handshakes, refusals (peer's fault), misuse (ours)."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commons.core.transport.handshake import (
    CLIENT_AUTH_LENGTH,
    CLIENT_HELLO_LENGTH,
    SERVER_ACCEPT_LENGTH,
    SERVER_HELLO_LENGTH,
    ClientHandshake,
    ClientState,
    HandshakeRefused,
    HandshakeUsageError,
    MessageBuffer,
    RefusalReason,
    ServerHandshake,
    ServerState,
    network_hmac,
)

NETWORK_KEY = hashlib.sha256(b"test network").digest()
CLIENT_SEED = hashlib.sha256(b"test client").digest()
SERVER_SEED = hashlib.sha256(b"test server").digest()
CLIENT_EPH = hashlib.sha256(b"test client ephemeral").digest()
SERVER_EPH = hashlib.sha256(b"test server ephemeral").digest()
SERVER_PK = ServerHandshake(NETWORK_KEY, SERVER_SEED).public_key
CLIENT_PK = ServerHandshake(NETWORK_KEY, CLIENT_SEED).public_key


def pair(**server_kwargs: object) -> tuple[ClientHandshake, ServerHandshake]:
    client = ClientHandshake(NETWORK_KEY, CLIENT_SEED, SERVER_PK, ephemeral_secret=CLIENT_EPH)
    server = ServerHandshake(NETWORK_KEY, SERVER_SEED, ephemeral_secret=SERVER_EPH, **server_kwargs)  # type: ignore[arg-type]
    return client, server


def messages() -> tuple[bytes, bytes, bytes, bytes]:
    """The four messages of one good handshake with fixed ephemerals."""
    client, server = pair()
    msg1 = client.start()
    msg2 = server.receive_client_hello(msg1)
    msg3 = client.receive_server_hello(msg2)
    msg4 = server.receive_client_auth(msg3)
    client.receive_server_accept(msg4)
    return msg1, msg2, msg3, msg4


MSG1, MSG2, MSG3, MSG4 = messages()


def flip(message: bytes, index: int) -> bytes:
    return message[:index] + bytes([message[index] ^ 0x01]) + message[index + 1 :]


def test_handshake_yields_mirrored_keys_and_each_side_learns_the_other() -> None:
    client, server = pair()
    msg1 = client.start()
    msg2 = server.receive_client_hello(msg1)
    msg3 = client.receive_server_hello(msg2)
    msg4 = server.receive_client_auth(msg3)
    outcome = client.receive_server_accept(msg4)

    assert [len(m) for m in (msg1, msg2, msg3, msg4)] == [64, 64, 112, 80]
    assert outcome.remote_public_key == SERVER_PK
    assert server.outcome.remote_public_key == CLIENT_PK
    assert (outcome.encrypt_key, outcome.encrypt_nonce) == (server.outcome.decrypt_key, server.outcome.decrypt_nonce)
    assert (outcome.decrypt_key, outcome.decrypt_nonce) == (server.outcome.encrypt_key, server.outcome.encrypt_nonce)
    assert outcome.encrypt_key != outcome.decrypt_key
    assert client.state is ClientState.DONE and server.state is ServerState.DONE


def test_outcome_repr_does_not_show_session_keys() -> None:
    client, server = pair()
    server.receive_client_auth(client.receive_server_hello(server.receive_client_hello(client.start())))
    text = repr(server.outcome)
    assert server.outcome.encrypt_key.hex() not in text and repr(server.outcome.encrypt_key) not in text


def test_random_ephemerals_give_fresh_session_keys_each_time() -> None:
    keys = set()
    for _ in range(3):
        client = ClientHandshake(NETWORK_KEY, CLIENT_SEED, SERVER_PK)
        server = ServerHandshake(NETWORK_KEY, SERVER_SEED)
        outcome = client.receive_server_accept(
            server.receive_client_auth(client.receive_server_hello(server.receive_client_hello(client.start())))
        )
        keys.add(outcome.encrypt_key)
    assert len(keys) == 3


def test_hello_is_network_hmac_then_ephemeral_key() -> None:
    assert MSG1[:32] == network_hmac(NETWORK_KEY, MSG1[32:])
    assert MSG2[:32] == network_hmac(NETWORK_KEY, MSG2[32:])


@pytest.mark.parametrize("index", range(CLIENT_HELLO_LENGTH))
def test_server_refuses_client_hello_with_any_byte_corrupted(index: int) -> None:
    _, server = pair()
    with pytest.raises(HandshakeRefused) as refused:
        server.receive_client_hello(flip(MSG1, index))
    assert refused.value.reason is RefusalReason.WRONG_NETWORK
    assert server.state is ServerState.REFUSED


@pytest.mark.parametrize("index", range(SERVER_HELLO_LENGTH))
def test_client_refuses_server_hello_with_any_byte_corrupted(index: int) -> None:
    client, _ = pair()
    client.start()
    with pytest.raises(HandshakeRefused):
        client.receive_server_hello(flip(MSG2, index))
    assert client.state is ClientState.REFUSED


@pytest.mark.parametrize("index", range(CLIENT_AUTH_LENGTH))
def test_server_refuses_client_auth_with_any_byte_corrupted(index: int) -> None:
    _, server = pair()
    server.receive_client_hello(MSG1)
    with pytest.raises(HandshakeRefused) as refused:
        server.receive_client_auth(flip(MSG3, index))
    assert refused.value.reason is RefusalReason.BAD_BOX
    assert server.state is ServerState.REFUSED
    with pytest.raises(HandshakeUsageError):
        server.outcome  # noqa: B018 -- a refused handshake never yields keys


@pytest.mark.parametrize("index", range(SERVER_ACCEPT_LENGTH))
def test_client_refuses_server_accept_with_any_byte_corrupted(index: int) -> None:
    client, _ = pair()
    client.start()
    client.receive_server_hello(MSG2)
    with pytest.raises(HandshakeRefused) as refused:
        client.receive_server_accept(flip(MSG4, index))
    assert refused.value.reason is RefusalReason.BAD_BOX
    assert client.state is ClientState.REFUSED


def test_server_refuses_client_of_another_network_before_answering() -> None:
    client = ClientHandshake(hashlib.sha256(b"other network").digest(), CLIENT_SEED, SERVER_PK)
    _, server = pair()
    with pytest.raises(HandshakeRefused) as refused:
        server.receive_client_hello(client.start())
    assert refused.value.reason is RefusalReason.WRONG_NETWORK
    # Nothing to send: the server is refused and can produce no further message.
    assert server.expected_length is None
    with pytest.raises(HandshakeUsageError):
        server.receive_client_auth(MSG3)


def test_client_refuses_server_of_another_network() -> None:
    client, _ = pair()
    client.start()
    # A hello of another network (both hellos share one layout: HMAC under its key | ephemeral key).
    other_hello = ClientHandshake(hashlib.sha256(b"other network").digest(), SERVER_SEED, CLIENT_PK).start()
    with pytest.raises(HandshakeRefused) as refused:
        client.receive_server_hello(other_hello)
    assert refused.value.reason is RefusalReason.WRONG_NETWORK


def test_client_dialing_wrong_server_key_is_refused_at_client_auth() -> None:
    wrong_pk = ServerHandshake(NETWORK_KEY, hashlib.sha256(b"someone else").digest()).public_key
    client = ClientHandshake(NETWORK_KEY, CLIENT_SEED, wrong_pk)
    server = ServerHandshake(NETWORK_KEY, SERVER_SEED)
    msg3 = client.receive_server_hello(server.receive_client_hello(client.start()))
    # The real server cannot open a box sealed for another key: it learns nothing of the client.
    with pytest.raises(HandshakeRefused) as refused:
        server.receive_client_auth(msg3)
    assert refused.value.reason is RefusalReason.BAD_BOX


def test_impostor_server_cannot_complete_handshake_for_expected_key() -> None:
    impostor = ServerHandshake(NETWORK_KEY, hashlib.sha256(b"impostor").digest())
    client = ClientHandshake(NETWORK_KEY, CLIENT_SEED, SERVER_PK)
    msg3 = client.receive_server_hello(impostor.receive_client_hello(client.start()))
    with pytest.raises(HandshakeRefused):
        impostor.receive_client_auth(msg3)
    # Whatever the impostor sends as message 4, the client refuses it.
    with pytest.raises(HandshakeRefused):
        client.receive_server_accept(bytes(SERVER_ACCEPT_LENGTH))


def test_server_refuses_unauthorized_client_without_accept() -> None:
    seen: list[bytes] = []

    def authorize(key: bytes) -> bool:
        seen.append(key)
        return False

    client, server = pair(authorize=authorize)
    msg3 = client.receive_server_hello(server.receive_client_hello(client.start()))
    with pytest.raises(HandshakeRefused) as refused:
        server.receive_client_auth(msg3)
    assert refused.value.reason is RefusalReason.UNAUTHORIZED
    assert seen == [CLIENT_PK]
    assert server.state is ServerState.REFUSED


def test_server_refuses_low_order_ephemeral_key() -> None:
    _, server = pair()
    low_order = bytes(32)  # the identity point: X25519 with it yields all zeros
    with pytest.raises(HandshakeRefused) as refused:
        server.receive_client_hello(network_hmac(NETWORK_KEY, low_order) + low_order)
    assert refused.value.reason is RefusalReason.BAD_KEY


def test_calls_out_of_order_are_usage_errors() -> None:
    client, server = pair()
    with pytest.raises(HandshakeUsageError):
        client.receive_server_hello(MSG2)  # before start()
    client.start()
    with pytest.raises(HandshakeUsageError):
        client.start()
    with pytest.raises(HandshakeUsageError):
        client.receive_server_accept(MSG4)
    with pytest.raises(HandshakeUsageError):
        client.outcome  # noqa: B018
    with pytest.raises(HandshakeUsageError):
        server.receive_client_auth(MSG3)


def test_message_of_wrong_length_is_a_usage_error_not_a_refusal() -> None:
    _, server = pair()
    with pytest.raises(HandshakeUsageError, match="MessageBuffer"):
        server.receive_client_hello(MSG1[:-1])
    assert server.state is ServerState.AWAIT_CLIENT_HELLO


@pytest.mark.parametrize("bad", [b"", bytes(31), bytes(33)])
def test_keys_of_wrong_length_are_usage_errors(bad: bytes) -> None:
    with pytest.raises(HandshakeUsageError):
        ClientHandshake(bad, CLIENT_SEED, SERVER_PK)
    with pytest.raises(HandshakeUsageError):
        ServerHandshake(NETWORK_KEY, bad)
    with pytest.raises(HandshakeUsageError):
        ClientHandshake(NETWORK_KEY, CLIENT_SEED, SERVER_PK, ephemeral_secret=bad)


def test_expected_length_follows_the_states() -> None:
    client, server = pair()
    assert client.expected_length is None and server.expected_length == 64
    server_hello = server.receive_client_hello(client.start())
    assert client.expected_length == 64 and server.expected_length == 112
    msg3 = client.receive_server_hello(server_hello)
    assert client.expected_length == 80
    client.receive_server_accept(server.receive_client_auth(msg3))
    assert client.expected_length is None and server.expected_length is None


@settings(max_examples=50, deadline=None)
@given(cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12), tail=st.binary(max_size=40))
def test_handshake_over_arbitrary_chunks_completes_and_keeps_trailing_bytes(cuts: list[int], tail: bytes) -> None:
    """Drive both sides through MessageBuffer with the byte streams cut at arbitrary points."""
    client, server = pair()
    to_server, to_client = MessageBuffer(), MessageBuffer()

    def chunks(data: bytes) -> list[bytes]:
        points = sorted({c % (len(data) + 1) for c in cuts})
        edges = [0, *points, len(data)]
        return [data[a:b] for a, b in zip(edges, edges[1:])]

    client_out = client.start()
    server_out = b""
    while client.state is not ClientState.DONE:
        for chunk in chunks(client_out):
            to_server.feed(chunk)
            while server.expected_length and (message := to_server.pop(server.expected_length)) is not None:
                server_out += server.receive_message(message)
        client_out = b""
        # The server's first box-stream bytes may arrive glued to message 4.
        data, server_out = server_out + (tail if server.state is ServerState.DONE else b""), b""
        for chunk in chunks(data):
            to_client.feed(chunk)
            while client.expected_length and (message := to_client.pop(client.expected_length)) is not None:
                client_out += client.receive_message(message)

    assert client.outcome.encrypt_key == server.outcome.decrypt_key
    assert to_client.rest() == tail


def test_message_buffer_says_need_more_until_a_whole_message_arrived() -> None:
    buffer = MessageBuffer()
    buffer.feed(MSG1[:10])
    assert buffer.pop(64) is None
    buffer.feed(MSG1[10:] + b"extra")
    assert buffer.pop(64) == MSG1
    assert buffer.rest() == b"extra"
    assert len(buffer) == 0
    with pytest.raises(HandshakeUsageError):
        buffer.pop(None)
