"""Box-stream: the framing that encrypts and authenticates every byte after the Secret Handshake.

As in the Scuttlebutt protocol guide ("Box stream",
https://ssbc.github.io/scuttlebutt-protocol-guide/#box-stream) and the reference
``pull-box-stream``. Each box is a 34-byte header followed by a body of 1..4096 bytes:

    header = secretbox(key, nonce,     be16(body length) | body MAC(16))   -> 16 + 18 = 34 bytes
    body   = secretbox(key, nonce + 1, payload) without its MAC (the MAC rides in the header)

and the next box uses nonce + 2. The nonce is a 24-byte big-endian counter that wraps mod 2**192.
The stream ends with a *goodbye*: a header box around 18 zero bytes. Because it is authenticated, a
receiver can tell a clean end from a connection cut by the network or an attacker.

Box-stream is a byte stream: it keeps no message boundaries beyond one box (longer payloads are
split into 4096-byte boxes). Framing of records belongs to the layer above.

Whose fault an error is: :class:`BoxStreamError` -- the peer sent a header or body that does not
authenticate, a malformed length, or bytes after its goodbye; close the connection without
answering. :class:`BoxStreamUsageError` -- our code used the encoder/decoder after it ended.
"""

from __future__ import annotations

import enum

import nacl.bindings as sodium
import nacl.exceptions

KEY_LENGTH = 32
NONCE_LENGTH = 24
MAC_LENGTH = 16
HEADER_LENGTH = 34  # MAC(16) | encrypted(length(2) | body MAC(16))
MAX_BODY_LENGTH = 4096

_NONCE_MODULUS = 1 << (8 * NONCE_LENGTH)
_GOODBYE_PLAINTEXT = bytes(2 + MAC_LENGTH)


class BoxStreamError(Exception):
    """The peer's bytes failed authentication or framing: the peer's fault. Close without answering."""


class BoxStreamUsageError(Exception):
    """The encoder or decoder was used after it ended: our fault."""


class DecoderState(enum.Enum):
    OPEN = "open"  # boxes may arrive
    GOODBYE = "goodbye"  # the peer ended its stream cleanly; nothing more may arrive
    BROKEN = "broken"  # a BoxStreamError was raised; the connection must be closed


def _check(name: str, value: bytes, length: int) -> int:
    if not isinstance(value, bytes | bytearray) or len(value) != length:
        raise BoxStreamUsageError(f"{name} must be {length} bytes")
    return int.from_bytes(value, "big")


def _nonce(counter: int) -> bytes:
    return (counter % _NONCE_MODULUS).to_bytes(NONCE_LENGTH, "big")


class BoxStreamEncoder:
    """Seals payloads for one direction of a link: ``encode(payload)`` -> wire bytes, ``goodbye()``."""

    def __init__(self, key: bytes, nonce: bytes) -> None:
        self._counter = _check("nonce", nonce, NONCE_LENGTH)
        _check("key", key, KEY_LENGTH)
        self._key = bytes(key)
        self.closed = False

    def encode(self, payload: bytes) -> bytes:
        """Boxes for ``payload``, split into bodies of at most 4096 bytes; b"" for an empty payload
        (an empty box would be indistinguishable in length from nothing, and the reference sends none)."""
        if self.closed:
            raise BoxStreamUsageError("cannot encode after goodbye()")
        out = bytearray()
        view = memoryview(payload)
        key, counter = self._key, self._counter
        for start in range(0, len(view), MAX_BODY_LENGTH):
            chunk = view[start : start + MAX_BODY_LENGTH]
            body = sodium.crypto_secretbox_easy(bytes(chunk), _nonce(counter + 1), key)
            header = len(chunk).to_bytes(2, "big") + body[:MAC_LENGTH]
            out += sodium.crypto_secretbox_easy(header, _nonce(counter), key)
            out += body[MAC_LENGTH:]
            counter += 2
        self._counter = counter
        return bytes(out)

    def goodbye(self) -> bytes:
        """The authenticated end of stream (34 bytes). Nothing may be encoded after it."""
        if self.closed:
            raise BoxStreamUsageError("goodbye() already sent")
        self.closed = True
        return sodium.crypto_secretbox_easy(_GOODBYE_PLAINTEXT, _nonce(self._counter), self._key)


class BoxStreamDecoder:
    """Opens the peer's boxes: ``feed(data)`` -> list of box bodies, in order.

    Feed chunks of any size; a partial box waits in the buffer. When the transport reaches EOF,
    ``state is DecoderState.GOODBYE`` tells a clean end from a cut connection (``OPEN``).
    """

    def __init__(self, key: bytes, nonce: bytes) -> None:
        self._counter = _check("nonce", nonce, NONCE_LENGTH)
        _check("key", key, KEY_LENGTH)
        self._key = bytes(key)
        self._buffer = bytearray()
        # A header already opened whose body has not fully arrived: (length, body MAC).
        self._pending: tuple[int, bytes] | None = None
        self.state = DecoderState.OPEN

    @property
    def goodbye_received(self) -> bool:
        return self.state is DecoderState.GOODBYE

    @property
    def buffered(self) -> int:
        """Bytes received but not yet part of a whole box."""
        return len(self._buffer)

    def _fail(self, message: str) -> BoxStreamError:
        self.state = DecoderState.BROKEN
        self._buffer.clear()
        return BoxStreamError(message)

    def feed(self, data: bytes) -> list[bytes]:
        if self.state is DecoderState.BROKEN:
            raise BoxStreamUsageError("decoder already failed; the connection must be closed")
        if self.state is DecoderState.GOODBYE:
            if data:
                raise self._fail("bytes after the peer's goodbye")
            return []
        self._buffer += data
        out: list[bytes] = []
        buffer, key = self._buffer, self._key
        while True:
            if self._pending is None:
                if len(buffer) < HEADER_LENGTH:
                    break
                try:
                    header = sodium.crypto_secretbox_open_easy(bytes(buffer[:HEADER_LENGTH]), _nonce(self._counter), key)
                except nacl.exceptions.CryptoError:
                    raise self._fail("box header does not authenticate") from None
                del buffer[:HEADER_LENGTH]
                if header == _GOODBYE_PLAINTEXT:
                    self.state = DecoderState.GOODBYE
                    if buffer:
                        raise self._fail("bytes after the peer's goodbye")
                    break
                length = int.from_bytes(header[:2], "big")
                # The reference never sends an empty body, and nothing over 4096: either means a
                # peer that does not follow the framing.
                if not 0 < length <= MAX_BODY_LENGTH:
                    raise self._fail(f"box body length {length} outside 1..{MAX_BODY_LENGTH}")
                self._pending = (length, header[2:])
            length, mac = self._pending
            if len(buffer) < length:
                break
            try:
                body = sodium.crypto_secretbox_open_easy(mac + bytes(buffer[:length]), _nonce(self._counter + 1), key)
            except nacl.exceptions.CryptoError:
                raise self._fail("box body does not authenticate") from None
            del buffer[:length]
            self._pending = None
            self._counter += 2
            out.append(body)
        return out
