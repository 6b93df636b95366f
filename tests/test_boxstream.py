"""Box-stream framing: round trips, splitting, nonces, goodbye, and strict refusal of tampering."""

from __future__ import annotations

import hashlib

import nacl.bindings as sodium
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commons.core.transport.boxstream import (
    HEADER_LENGTH,
    MAX_BODY_LENGTH,
    BoxStreamDecoder,
    BoxStreamEncoder,
    BoxStreamError,
    BoxStreamUsageError,
    DecoderState,
)

KEY = hashlib.sha256(b"box key").digest()
NONCE = hashlib.sha256(b"box nonce").digest()[:24]


def endpoints(nonce: bytes = NONCE) -> tuple[BoxStreamEncoder, BoxStreamDecoder]:
    return BoxStreamEncoder(KEY, nonce), BoxStreamDecoder(KEY, nonce)


def test_payloads_round_trip_in_order() -> None:
    encoder, decoder = endpoints()
    wire = b"".join(encoder.encode(p) for p in (b"one", b"two", b"three"))
    assert decoder.feed(wire) == [b"one", b"two", b"three"]
    assert decoder.state is DecoderState.OPEN


def test_box_is_header_plus_body_of_same_length() -> None:
    encoder, _ = endpoints()
    assert len(encoder.encode(b"x" * 300)) == HEADER_LENGTH + 300


def test_large_payload_is_split_into_boxes_of_at_most_4096_bytes() -> None:
    encoder, decoder = endpoints()
    payload = bytes(range(256)) * 40  # 10240 bytes
    wire = encoder.encode(payload)
    bodies = decoder.feed(wire)
    assert [len(b) for b in bodies] == [4096, 4096, 2048]
    assert b"".join(bodies) == payload
    assert len(wire) == 3 * HEADER_LENGTH + len(payload)


def test_empty_payload_sends_nothing() -> None:
    encoder, decoder = endpoints()
    assert encoder.encode(b"") == b""
    assert decoder.feed(encoder.encode(b"after")) == [b"after"]


def test_header_and_body_use_consecutive_nonces() -> None:
    encoder, _ = endpoints()
    wire = encoder.encode(b"abc")
    start = int.from_bytes(NONCE, "big")
    header = sodium.crypto_secretbox_open_easy(wire[:HEADER_LENGTH], NONCE, KEY)
    assert header[:2] == (3).to_bytes(2, "big")
    body_nonce = (start + 1).to_bytes(24, "big")
    assert sodium.crypto_secretbox_open_easy(header[2:] + wire[HEADER_LENGTH:], body_nonce, KEY) == b"abc"
    second = encoder.encode(b"d")
    assert sodium.crypto_secretbox_open_easy(second[:HEADER_LENGTH], (start + 2).to_bytes(24, "big"), KEY)


def test_nonce_counter_wraps_at_2_to_the_192() -> None:
    encoder, decoder = endpoints(b"\xff" * 24)
    wire = encoder.encode(b"wrap") + encoder.encode(b"around") + encoder.goodbye()
    assert decoder.feed(wire) == [b"wrap", b"around"]
    assert decoder.goodbye_received


def test_goodbye_is_an_authenticated_all_zero_header() -> None:
    encoder, decoder = endpoints()
    encoder.encode(b"x")
    goodbye = encoder.goodbye()
    assert len(goodbye) == HEADER_LENGTH
    third_nonce = (int.from_bytes(NONCE, "big") + 2).to_bytes(24, "big")
    assert sodium.crypto_secretbox_open_easy(goodbye, third_nonce, KEY) == bytes(18)
    decoder.feed(BoxStreamEncoder(KEY, NONCE).encode(b"x"))
    assert decoder.feed(goodbye) == []
    assert decoder.goodbye_received


def test_connection_cut_before_goodbye_is_detectable() -> None:
    encoder, decoder = endpoints()
    decoder.feed(encoder.encode(b"data"))
    assert not decoder.goodbye_received


def test_encode_after_goodbye_is_a_usage_error() -> None:
    encoder, _ = endpoints()
    encoder.goodbye()
    with pytest.raises(BoxStreamUsageError):
        encoder.encode(b"late")
    with pytest.raises(BoxStreamUsageError):
        encoder.goodbye()


def test_bytes_after_goodbye_are_the_peers_fault() -> None:
    encoder, decoder = endpoints()
    wire = encoder.goodbye()
    with pytest.raises(BoxStreamError):
        decoder.feed(wire + b"\x00")
    assert decoder.state is DecoderState.BROKEN


def test_bytes_fed_after_a_received_goodbye_are_refused() -> None:
    encoder, decoder = endpoints()
    decoder.feed(encoder.goodbye())
    assert decoder.feed(b"") == []
    with pytest.raises(BoxStreamError):
        decoder.feed(b"more")


@pytest.mark.parametrize("index", range(HEADER_LENGTH + 5))
def test_any_flipped_byte_of_a_box_is_refused(index: int) -> None:
    encoder, decoder = endpoints()
    wire = bytearray(encoder.encode(b"hello"))
    wire[index] ^= 0x80
    with pytest.raises(BoxStreamError):
        decoder.feed(bytes(wire))
    assert decoder.state is DecoderState.BROKEN
    with pytest.raises(BoxStreamUsageError):
        decoder.feed(b"")  # a broken decoder is not to be used again


def test_replayed_or_reordered_boxes_are_refused() -> None:
    encoder, decoder = endpoints()
    first, second = encoder.encode(b"first"), encoder.encode(b"second")
    with pytest.raises(BoxStreamError):
        decoder.feed(second + first)
    _, decoder = endpoints()
    decoder.feed(first)
    with pytest.raises(BoxStreamError):
        decoder.feed(first)


def test_box_sealed_with_another_key_is_refused() -> None:
    encoder = BoxStreamEncoder(hashlib.sha256(b"other").digest(), NONCE)
    _, decoder = endpoints()
    with pytest.raises(BoxStreamError):
        decoder.feed(encoder.encode(b"hello"))


def _header_claiming(length: int) -> bytes:
    return sodium.crypto_secretbox_easy(length.to_bytes(2, "big") + bytes(range(1, 17)), NONCE, KEY)


@pytest.mark.parametrize("length", [0, MAX_BODY_LENGTH + 1, 0xFFFF])
def test_authentic_header_with_length_outside_1_to_4096_is_refused(length: int) -> None:
    _, decoder = endpoints()
    with pytest.raises(BoxStreamError, match="length"):
        decoder.feed(_header_claiming(length))


@pytest.mark.parametrize("bad", [b"", bytes(23), bytes(25)])
def test_nonce_of_wrong_length_is_a_usage_error(bad: bytes) -> None:
    with pytest.raises(BoxStreamUsageError):
        BoxStreamEncoder(KEY, bad)
    with pytest.raises(BoxStreamUsageError):
        BoxStreamDecoder(bad + bytes(8), NONCE)


@settings(max_examples=60, deadline=None)
@given(
    payloads=st.lists(st.binary(min_size=0, max_size=9000), max_size=6),
    cuts=st.lists(st.integers(min_value=0, max_value=60000), max_size=10),
)
def test_any_payloads_fed_in_any_chunks_decode_to_the_same_bytes(payloads: list[bytes], cuts: list[int]) -> None:
    encoder, decoder = endpoints()
    wire = b"".join(encoder.encode(p) for p in payloads) + encoder.goodbye()
    points = sorted({c % (len(wire) + 1) for c in cuts})
    edges = [0, *points, len(wire)]
    bodies: list[bytes] = []
    for a, b in zip(edges, edges[1:]):
        bodies += decoder.feed(wire[a:b])
    assert b"".join(bodies) == b"".join(payloads)
    assert all(0 < len(body) <= MAX_BODY_LENGTH for body in bodies)
    assert decoder.goodbye_received
    assert decoder.buffered == 0
