"""Ids and signatures: what makes a record's bytes the author's, and the check a receiver runs.

``id = BLAKE3-256(body)``; ``signature = Ed25519(author, domain_tag(type) || id)``. :func:`verify`
is the one door for records from outside: canonical body (``codec.py``), id, network, date,
signature; :func:`verify_many` is the same door for a batch. :func:`received_key` is what a
receiver dedupes by before it pays for a signature check.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import nacl.bindings
import nacl.exceptions
import nacl.signing
from blake3 import blake3

from commons.core.records.codec import decode_body, encode_body, peek_type
from commons.core.records.types import (
    FUTURE_TOLERANCE_DAYS,
    SIGNATURE_BYTES,
    InvalidRecord,
    Lesson,
    Problem,
    Record,
    RecordType,
    RecordUsageError,
    Revocation,
)
from commons.core.scrub import require_clean


def record_id(body: bytes) -> bytes:
    return blake3(body).digest()


_DOMAIN_TAGS = {rtype: rtype.domain_tag for rtype in RecordType}


def signed_message(rtype: RecordType, rid: bytes) -> bytes:
    return _DOMAIN_TAGS[rtype] + rid




_TAG_BYTES = {rtype: bytes([rtype.tag]) for rtype in RecordType}


def reconcile_key(rtype: RecordType, rid: bytes) -> bytes:
    """The 33-byte key under which a record is reconciled: its type tag, then its id."""
    return _TAG_BYTES[rtype] + rid


def received_key(body: bytes) -> bytes | None:
    """The reconciliation key of a body received from outside, before it is decoded: the tag of
    the type it declares (``peek_type``), then its id. None when the type cannot be peeked: the
    body is not canonical then, and decoding will say why. A valid body's key is its record's.

    For dedupe ahead of the signature check; hand the id on to :func:`verify` (``body_id``) so
    that the body is hashed once."""
    rtype = peek_type(body)
    return None if rtype is None else _TAG_BYTES[rtype] + blake3(body).digest()


@dataclass(frozen=True)
class SignedRecord:
    """A record with its canonical body, id and signature, as stored and as sent."""

    record: Record
    body: bytes
    id: bytes
    signature: bytes

    @property
    def type(self) -> RecordType:
        return type(self.record).type

    @property
    def author(self) -> bytes:
        return self.record.author

    @property
    def key(self) -> bytes:
        # Made on each use (one concatenation): functools.cached_property takes a lock shared by
        # every instance on each read in Python 3.11, which was 4% of a catching-up daemon's samples.
        return _TAG_BYTES[type(self.record).type] + self.id


def _texts(record: Record) -> list[tuple[str, str]]:
    """The words a record carries to every peer, by the field that holds them."""
    if isinstance(record, Lesson):
        return [("text", record.text), ("prediction's situation", record.prediction.situation),
                ("prediction's outcome", record.prediction.outcome), *(("topic", t) for t in record.topics)]
    if isinstance(record, Revocation):
        return [("reason", record.reason)]
    return []


def sign(record: Record, signing_key: nacl.signing.SigningKey) -> SignedRecord:
    """Sign a record with its author's key.

    The last privacy gate: a record whose words the scrubber would still change is refused
    (``commons.core.scrub.ScrubbedTextRequired``, naming the field and the kinds found, never the
    values). Every door before this one scrubs; this one only checks, because a signed record
    cannot be taken back.
    """
    if bytes(signing_key.verify_key) != record.author:
        raise RecordUsageError("the signing key is not the record's author key")
    for field, text in _texts(record):
        require_clean(text, f"signing a {record.type.value} record: its {field}")
    body = encode_body(record)
    rid = record_id(body)
    signature = signing_key.sign(signed_message(record.type, rid)).signature
    return SignedRecord(record, body, rid, signature)


def verify(
    body: bytes,
    signature: bytes,
    *,
    network: bytes,
    today: int,
    claimed_id: bytes | None = None,
    body_id: bytes | None = None,
) -> SignedRecord:
    """Accept a record from outside, or raise :class:`InvalidRecord` saying what is wrong with it.

    ``today`` is the receiver's current UTC day; ``claimed_id`` is the id the sender named, when it
    named one (an export line, a gossip announcement), and must match the body. ``body_id`` is
    ``record_id(body)`` when the caller computed it already (intake does, to dedupe): it is
    trusted, not checked.
    """
    record, rid = _check_body(body, signature, network, today, claimed_id, body_id)
    _check_signature(record, rid, signature)
    return SignedRecord(record, body, rid, signature)


def verify_many(
    items: Sequence[tuple[bytes, bytes]],
    *,
    network: bytes,
    today: int,
    claimed_ids: Sequence[bytes | None] | None = None,
    body_ids: Sequence[bytes | None] | None = None,
) -> list[SignedRecord | InvalidRecord]:
    """:func:`verify` of each (body, signature): the record, or the error saying what is wrong
    with it, in order. The verdicts are verify's; the work is done in two passes (every body, then
    every signature), so that the decoder and libsodium each run with the CPU's caches their own,
    which costs measurably less than alternating them (``tests/benchmarks/bench_intake.py``)."""
    checked: list[tuple[Record, bytes] | InvalidRecord] = []
    for index, (body, signature) in enumerate(items):
        try:
            checked.append(_check_body(body, signature, network, today,
                                       None if claimed_ids is None else claimed_ids[index],
                                       None if body_ids is None else body_ids[index]))
        except InvalidRecord as error:
            checked.append(error)
    verdicts: list[SignedRecord | InvalidRecord] = []
    for (body, signature), outcome in zip(items, checked):
        if type(outcome) is tuple:
            record, rid = outcome
            try:
                _check_signature(record, rid, signature)
                outcome = SignedRecord(record, body, rid, signature)
            except InvalidRecord as error:
                outcome = error
        verdicts.append(outcome)
    return verdicts


def _check_body(body: bytes, signature: bytes, network: bytes, today: int, claimed_id: bytes | None,
                body_id: bytes | None) -> tuple[Record, bytes]:
    """Everything verify checks but the signature itself: the record and its id."""
    record = decode_body(body)
    rid = record_id(body) if body_id is None else body_id
    if claimed_id is not None and claimed_id != rid:
        raise InvalidRecord(Problem.ID_MISMATCH, "the record's id does not match its body")
    if record.network != network:
        raise InvalidRecord(Problem.WRONG_NETWORK, "the record belongs to another network")
    if record.created > today + FUTURE_TOLERANCE_DAYS:
        raise InvalidRecord(Problem.FUTURE, f"the record is dated day {record.created}, in the future")
    if not isinstance(signature, bytes) or len(signature) != SIGNATURE_BYTES:
        raise InvalidRecord(Problem.BAD_SIGNATURE, f"a signature is {SIGNATURE_BYTES} bytes")
    return record, rid


def _check_signature(record: Record, rid: bytes, signature: bytes) -> None:
    try:
        nacl.bindings.crypto_sign_open(signature + signed_message(record.type, rid), record.author)
    except (nacl.exceptions.BadSignatureError, ValueError):
        raise InvalidRecord(Problem.BAD_SIGNATURE, "the signature does not verify with the author's key") from None
