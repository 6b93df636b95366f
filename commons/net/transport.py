"""The secure link between two nodes: TCP, then Secret Handshake, then box-stream.

A thin trio driver over the sans-I/O ``commons.core.transport.handshake`` and ``commons.core.transport.boxstream``: it only
moves bytes. The dialer (client) must know the listener's transport key in advance; the listener
learns the dialer's from the handshake. A handshake that fails is closed at once, without a word
(the contract of :class:`~commons.core.transport.handshake.HandshakeRefused`), and so is one that stalls past
``HANDSHAKE_TIMEOUT``.

Whose fault: :class:`PeerFailed` — the other side broke the protocol or went away (the cause is
chained); ``trio.ClosedResourceError`` — our own code used a link it had closed.
"""

from __future__ import annotations

from collections.abc import Callable

import trio

from commons.core.transport import BoxStreamDecoder, BoxStreamEncoder, BoxStreamError
from commons.core.transport import (
    ClientHandshake,
    HandshakeOutcome,
    HandshakeRefused,
    MessageBuffer,
    ServerHandshake,
)
from commons.net.admission import HalfOpenLimit, HalfOpenRefused

HANDSHAKE_TIMEOUT = 10.0
RECEIVE_BYTES = 65536


class PeerFailed(Exception):
    """The peer broke the protocol, refused us, or the connection broke: not our fault."""


class SecureLink:
    """A handshaken connection: ``send`` payloads, ``receive`` decrypted bytes, ``aclose``."""

    def __init__(self, stream: trio.abc.Stream, outcome: HandshakeOutcome, leftover: bytes):
        self.stream = stream
        self.remote_key = outcome.remote_public_key
        self._encoder = BoxStreamEncoder(outcome.encrypt_key, outcome.encrypt_nonce)
        self._decoder = BoxStreamDecoder(outcome.decrypt_key, outcome.decrypt_nonce)
        self._pending = self._decode(leftover) if leftover else []
        self._send_lock = trio.Lock()
        self.bytes_sent = 0
        self.bytes_received = len(leftover)

    def _decode(self, data: bytes) -> list[bytes]:
        try:
            return self._decoder.feed(data)
        except BoxStreamError as error:
            raise PeerFailed(f"the peer sent a corrupt box-stream: {error}") from error

    async def send(self, payload: bytes) -> None:
        data = self._encoder.encode(payload)
        async with self._send_lock:
            try:
                await self.stream.send_all(data)
            except (trio.BrokenResourceError, OSError) as error:
                raise PeerFailed(f"the connection broke while sending: {error}") from error
        self.bytes_sent += len(data)

    async def receive(self) -> bytes:
        """The next decrypted bytes; b"" when the peer said goodbye or closed the connection."""
        while not self._pending:
            if self._decoder.goodbye_received:
                return b""
            try:
                data = await self.stream.receive_some(RECEIVE_BYTES)
            except (trio.BrokenResourceError, OSError) as error:
                raise PeerFailed(f"the connection broke: {error}") from error
            if not data:
                if self._decoder.buffered:
                    raise PeerFailed("the connection ended in the middle of a box")
                return b""
            self.bytes_received += len(data)
            self._pending = self._decode(data)
        return self._pending.pop(0)

    async def aclose(self) -> None:
        """Say goodbye (best effort) and close."""
        with trio.move_on_after(1) as scope:
            scope.shield = True
            try:
                async with self._send_lock:
                    await self.stream.send_all(self._encoder.goodbye())
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError, Exception):
                pass
        await trio.aclose_forcefully(self.stream)


async def _read_message(stream: trio.abc.Stream, buffer: MessageBuffer, length: int) -> bytes:
    while (message := buffer.pop(length)) is None:
        data = await stream.receive_some(RECEIVE_BYTES)
        if not data:
            raise PeerFailed("the peer closed the connection during the handshake")
        buffer.feed(data)
    return message


async def handshake_as_client(
    stream: trio.abc.Stream, *, network_key: bytes, seed: bytes, server_key: bytes
) -> SecureLink:
    """Dial side: prove who we are to the server whose transport key we know."""
    shake = ClientHandshake(network_key, seed, server_key)
    buffer = MessageBuffer()
    try:
        with trio.fail_after(HANDSHAKE_TIMEOUT):
            await stream.send_all(shake.start())
            reply = shake.receive_server_hello(await _read_message(stream, buffer, shake.expected_length))
            await stream.send_all(reply)
            outcome = shake.receive_server_accept(await _read_message(stream, buffer, shake.expected_length))
    except BaseException as error:
        await trio.aclose_forcefully(stream)
        raise _as_peer_failure(error) from error
    return SecureLink(stream, outcome, buffer.rest())


async def handshake_as_server(
    stream: trio.abc.Stream,
    *,
    network_key: bytes,
    seed: bytes,
    authorize: Callable[[bytes], bool] | None = None,
    half_open: HalfOpenLimit | None = None,
) -> SecureLink:
    """Listen side: learn and check the dialer's transport key.

    With ``half_open``, the connection counts against its caps until the handshake ends: one over
    its address's cap is closed at once, unread, and one that is the oldest of a full cap when a
    newcomer arrives is dropped (:class:`PeerFailed` says which, ``commons.net.admission`` why)."""
    if half_open is None:
        return await _serve_handshake(stream, network_key, seed, authorize)
    address = remote_address(stream)
    with trio.CancelScope() as scope:
        try:
            entry = half_open.enter(address, scope.cancel)
        except HalfOpenRefused as refused:
            await trio.aclose_forcefully(stream)
            raise PeerFailed(f"refused before the handshake: {refused}") from None
        try:
            return await _serve_handshake(stream, network_key, seed, authorize)
        finally:
            half_open.leave(entry)
    await trio.aclose_forcefully(stream)  # only a drop cancels this scope
    raise PeerFailed("dropped before the end of its handshake: the oldest under way when the cap was full")


def remote_address(stream: trio.abc.Stream) -> str:
    """The remote IP address of a socket stream (what the half-open caps count), or "" if none."""
    socket = getattr(stream, "socket", None)
    try:
        peer = socket.getpeername() if socket is not None else None
    except OSError:  # already reset by the peer
        peer = None
    return str(peer[0]) if isinstance(peer, tuple) and peer else ""


async def _serve_handshake(
    stream: trio.abc.Stream, network_key: bytes, seed: bytes, authorize: Callable[[bytes], bool] | None
) -> SecureLink:
    shake = ServerHandshake(network_key, seed, authorize=authorize)
    buffer = MessageBuffer()
    try:
        with trio.fail_after(HANDSHAKE_TIMEOUT):
            reply = shake.receive_client_hello(await _read_message(stream, buffer, shake.expected_length))
            await stream.send_all(reply)
            accept = shake.receive_client_auth(await _read_message(stream, buffer, shake.expected_length))
            await stream.send_all(accept)
    except BaseException as error:
        await trio.aclose_forcefully(stream)
        raise _as_peer_failure(error) from error
    return SecureLink(stream, shake.outcome, buffer.rest())


def _as_peer_failure(error: BaseException) -> BaseException:
    if isinstance(error, PeerFailed):
        return error
    if isinstance(error, HandshakeRefused):
        return PeerFailed(str(error))
    if isinstance(error, trio.TooSlowError):
        return PeerFailed(f"the handshake took longer than {HANDSHAKE_TIMEOUT:g} s")
    if isinstance(error, (trio.BrokenResourceError, OSError)):
        return PeerFailed(f"the connection broke during the handshake: {error}")
    return error  # cancellation and our own bugs pass through unchanged


async def dial(host: str, port: int, *, network_key: bytes, seed: bytes, server_key: bytes) -> SecureLink:
    try:
        stream = await trio.open_tcp_stream(host, port)
    except OSError as error:
        raise PeerFailed(f"cannot reach {host}:{port}: {error.strerror or error}") from error
    return await handshake_as_client(stream, network_key=network_key, seed=seed, server_key=server_key)
