"""Gossip wire messages and the frame codec that carries them over a box-stream.

A *frame* on the byte stream is ``be32(length) || message``; a *message* is one msgpack array
whose first element is a type code (``MessageType``). Box-stream keeps no message boundaries
(bodies are at most 4096 bytes and a driver may read any amount), so :class:`FrameDecoder` cuts
the decrypted byte stream back into messages, and refuses a frame longer than the limit *before*
buffering it, so a peer cannot make us hold more than one frame's worth of bytes.

Decoding is strict and every failure is the peer's: :class:`GossipProtocolError` carries a short
``problem`` string that sessions use to score the peer (``oversize`` and ``unknown-type`` close
the session at once; the others cost ``penalty_malformed``). ``protocol/gossip.md`` is the normative
layout; ``protocol/vectors/gossip.json`` has vectors generated from this module.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import msgpack

GOSSIP_VERSION = 1
FRAME_HEADER_BYTES = 4
DEFAULT_MAX_FRAME_BYTES = 65536
KEY_BYTES = 33  # a reconciliation key: type tag, then the 32-byte record id
TRANSPORT_KEY_BYTES = 32
NETWORK_HASH_BYTES = 32
SIGNATURE_BYTES = 64
MAX_BODY_BYTES = 4096
MAX_ANNOUNCE_KEYS = 512
MAX_WANT_KEYS = 256
MAX_RECORDS = 256  # per Records message (the frame limit usually binds first)
MAX_PEER_ENTRIES = 32
MAX_ADDRESS_BYTES = 255
MAX_REASON_BYTES = 280
MAX_RECONCILE_BYTES = 65536


class GossipProtocolError(Exception):
    """The peer sent bytes that are not a valid gossip frame or message: the peer's fault."""

    def __init__(self, problem: str, message: str) -> None:
        super().__init__(message)
        self.problem = problem


class GossipUsageError(Exception):
    """This program misused the gossip API (a message that cannot be encoded, a call out of order)."""


class MessageType(enum.IntEnum):
    HELLO = 0
    ANNOUNCE = 1
    WANT = 2
    RECORDS = 3
    RECONCILE = 4
    PEERS = 5
    BYE = 6


class ReconcilePhase(enum.IntEnum):
    """Which reconciliation a Reconcile message belongs to (both sides may run one at once)."""

    START = 0  # the sender starts a new reconciliation that it initiates (its first message)
    INITIATOR = 1  # a later message of the reconciliation the sender initiated
    RESPONDER = 2  # the sender answers the reconciliation the receiver initiated


@dataclass(frozen=True)
class Hello:
    version: int
    network_hash: bytes
    listen: str | None  # where the sender accepts connections, if anywhere


@dataclass(frozen=True)
class Announce:
    keys: tuple[bytes, ...]  # "I hold these records" (ascending: revocations first)


@dataclass(frozen=True)
class Want:
    keys: tuple[bytes, ...]  # "send me these records"


@dataclass(frozen=True)
class Records:
    records: tuple[tuple[bytes, bytes], ...]  # (body, signature), revocations first
    missing: tuple[bytes, ...] = ()  # wanted keys the sender will not send (unknown or withheld)


@dataclass(frozen=True)
class Reconcile:
    phase: ReconcilePhase
    data: bytes  # one message of protocol/reconcile.md


@dataclass(frozen=True)
class Peers:
    entries: tuple[tuple[str, bytes], ...]  # (address, transport public key)


@dataclass(frozen=True)
class Bye:
    reason: str


Message = Hello | Announce | Want | Records | Reconcile | Peers | Bye


def encode(message: Message) -> bytes:
    """The msgpack encoding of a message (without the frame header)."""
    if isinstance(message, Hello):
        items: list[Any] = [MessageType.HELLO, message.version, message.network_hash, message.listen]
    elif isinstance(message, Announce):
        items = [MessageType.ANNOUNCE, list(message.keys)]
    elif isinstance(message, Want):
        items = [MessageType.WANT, list(message.keys)]
    elif isinstance(message, Records):
        items = [MessageType.RECORDS, [list(r) for r in message.records], list(message.missing)]
    elif isinstance(message, Reconcile):
        items = [MessageType.RECONCILE, int(message.phase), message.data]
    elif isinstance(message, Peers):
        items = [MessageType.PEERS, [list(e) for e in message.entries]]
    elif isinstance(message, Bye):
        items = [MessageType.BYE, message.reason]
    else:
        raise GossipUsageError(f"not a gossip message: {message!r:.80}")
    return msgpack.packb([int(i) if isinstance(i, enum.IntEnum) else i for i in items], use_bin_type=True)


def _fail(problem: str, why: str) -> GossipProtocolError:
    return GossipProtocolError(problem, f"malformed gossip message: {why}")


def _bytes_list(value: Any, size: int, limit: int, what: str) -> tuple[bytes, ...]:
    if type(value) is not list or len(value) > limit:
        raise _fail("bad-field", f"{what} must be a list of at most {limit} entries")
    for item in value:
        if type(item) is not bytes or len(item) != size:
            raise _fail("bad-field", f"each of {what} must be {size} bytes")
    return tuple(value)


def _short_str(value: Any, limit: int, what: str) -> str:
    if type(value) is not str or len(value.encode("utf-8", "surrogatepass")) > limit:
        raise _fail("bad-field", f"{what} must be a string of at most {limit} bytes")
    return value


def _shape(items: list[Any], length: int, what: str) -> None:
    if len(items) != length:
        raise _fail("bad-field", f"{what} has {len(items) - 1} fields, expected {length - 1}")


def decode(data: bytes, max_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> Message:
    """Decode one message strictly; raise GossipProtocolError (the peer's fault) on anything odd."""
    if len(data) > max_bytes:
        raise GossipProtocolError("oversize", f"gossip message of {len(data)} bytes exceeds {max_bytes}")
    try:
        items = msgpack.unpackb(
            data,
            raw=False,
            use_list=True,
            strict_map_key=True,
            max_str_len=max_bytes,
            max_bin_len=max_bytes,
            max_array_len=max(MAX_ANNOUNCE_KEYS, MAX_RECORDS),
            max_map_len=0,
            max_ext_len=0,
        )
    except (ValueError, TypeError, UnicodeDecodeError, msgpack.UnpackException) as error:
        raise _fail("malformed", f"not msgpack ({error})") from None
    if type(items) is not list or not items or type(items[0]) is not int:
        raise _fail("malformed", "a message is an array starting with its type code")
    try:
        kind = MessageType(items[0])
    except ValueError:
        # Not malformed but another protocol: a session closes on it at once (protocol/gossip.md).
        raise GossipProtocolError(
            "unknown-type", f"unknown gossip message type {items[0]} (version {GOSSIP_VERSION} has types"
                            f" {min(MessageType)}..{max(MessageType)})") from None
    if kind is MessageType.HELLO:
        _shape(items, 4, "Hello")
        version, network_hash, listen = items[1:]
        if type(version) is not int or type(network_hash) is not bytes or len(network_hash) != NETWORK_HASH_BYTES:
            raise _fail("bad-field", "Hello needs an integer version and a 32-byte network hash")
        return Hello(version, network_hash, None if listen is None else _short_str(listen, MAX_ADDRESS_BYTES, "listen"))
    if kind is MessageType.ANNOUNCE:
        _shape(items, 2, "Announce")
        return Announce(_bytes_list(items[1], KEY_BYTES, MAX_ANNOUNCE_KEYS, "Announce keys"))
    if kind is MessageType.WANT:
        _shape(items, 2, "Want")
        return Want(_bytes_list(items[1], KEY_BYTES, MAX_WANT_KEYS, "Want keys"))
    if kind is MessageType.RECORDS:
        _shape(items, 3, "Records")
        records = items[1]
        if type(records) is not list or len(records) > MAX_RECORDS:
            raise _fail("bad-field", f"Records carries a list of at most {MAX_RECORDS} records")
        for entry in records:
            if (
                type(entry) is not list
                or len(entry) != 2
                or type(entry[0]) is not bytes
                or type(entry[1]) is not bytes
                or len(entry[0]) > MAX_BODY_BYTES
            ):
                raise _fail("bad-field", "each record is [body (bin, at most 4096 bytes), signature (bin)]")
        missing = _bytes_list(items[2], KEY_BYTES, MAX_WANT_KEYS, "Records missing")
        return Records(tuple((body, sig) for body, sig in records), missing)
    if kind is MessageType.RECONCILE:
        _shape(items, 3, "Reconcile")
        try:
            phase = ReconcilePhase(items[1]) if type(items[1]) is int else None
        except ValueError:
            phase = None
        if phase is None or type(items[2]) is not bytes or len(items[2]) > MAX_RECONCILE_BYTES:
            raise _fail("bad-field", "Reconcile is [4, phase 0..2, data (bin)]")
        return Reconcile(phase, items[2])
    if kind is MessageType.PEERS:
        _shape(items, 2, "Peers")
        entries = items[1]
        if type(entries) is not list or len(entries) > MAX_PEER_ENTRIES:
            raise _fail("bad-field", f"Peers carries at most {MAX_PEER_ENTRIES} entries")
        out = []
        for entry in entries:
            if type(entry) is not list or len(entry) != 2:
                raise _fail("bad-field", "each peer is [address, transport key]")
            address = _short_str(entry[0], MAX_ADDRESS_BYTES, "address")
            out.append((address, _bytes_list([entry[1]], TRANSPORT_KEY_BYTES, 1, "transport key")[0]))
        return Peers(tuple(out))
    _shape(items, 2, "Bye")
    return Bye(_short_str(items[1], MAX_REASON_BYTES, "Bye reason"))


def encode_frame(message: bytes) -> bytes:
    """A message as it travels on the stream: its length (4 bytes, big-endian), then itself."""
    return len(message).to_bytes(FRAME_HEADER_BYTES, "big") + message


class FrameDecoder:
    """Cuts a byte stream into messages: ``feed(bytes) -> list[bytes]``.

    Raises GossipProtocolError("oversize") as soon as a header announces a frame longer than
    ``max_frame_bytes`` (or an empty one), before its body arrives. After an error the decoder is
    broken and the connection must be closed.
    """

    def __init__(self, max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES) -> None:
        self._max = max_frame_bytes
        self._buffer = bytearray()
        self.broken = False

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def feed(self, data: bytes) -> list[bytes]:
        if self.broken:
            raise GossipUsageError("feed() after the frame decoder reported an error")
        self._buffer += data
        frames: list[bytes] = []
        pos, buffer = 0, self._buffer
        while len(buffer) - pos >= FRAME_HEADER_BYTES:
            length = int.from_bytes(buffer[pos : pos + FRAME_HEADER_BYTES], "big")
            if not 0 < length <= self._max:
                self.broken = True
                raise GossipProtocolError("oversize", f"frame of {length} bytes; frames are 1..{self._max} bytes")
            end = pos + FRAME_HEADER_BYTES + length
            if end > len(buffer):
                break
            frames.append(bytes(buffer[pos + FRAME_HEADER_BYTES : end]))
            pos = end
        del buffer[:pos]
        return frames
