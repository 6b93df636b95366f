"""Ids and signatures: what makes a record's bytes the author's, and the check a receiver runs.

``id = BLAKE3-256(body)``; ``signature = Ed25519(author, domain_tag(type) || id)``. :func:`verify`
is the one door for records from outside: canonical body (``codec.py``), id, network, date,
signature; :func:`verify_many` is the same door for a batch. :func:`received_key` is what a
receiver dedupes by before it pays for a signature check.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass

import nacl.bindings
import nacl.exceptions
import nacl.signing
from blake3 import blake3

from commons.core.records.codec import _decode_canonical, decode_body, encode_body, peek_type
from commons.core.records.types import (
    FUTURE_TOLERANCE_DAYS,
    MAX_BODY_BYTES,
    SIGNATURE_BYTES,
    InvalidRecord,
    Lesson,
    Problem,
    Record,
    RecordType,
    RecordUsageError,
    Revocation,
)
from commons.core.policy import findings, refusal_as_is, require_clean


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


def text_refusal(record: Record) -> str | None:
    """Why a record's words may not be taken in as they are (the door policy,
    ``commons.core.policy.refusal_as_is``: nothing addressed to the agent, no instruction, one line
    of visible characters, nothing the scrubber replaces), or None. The same answer at every door
    a signed record comes in by: a peer, ``commons import``, a restored backup."""
    for field, text in _texts(record):
        if field == "text" and isinstance(record, Lesson):
            # refusal_as_is refuses a text with findings itself: None says it holds none.
            reason = refusal_as_is(text)
        elif _holds_findings(text):
            reason = "it holds a secret or personal detail the scrubber replaces"
        else:
            reason = None
        if reason is not None:
            return f"its {field} is refused: {reason}"
    return None


@functools.lru_cache(maxsize=8192)
def _holds_findings(text: str) -> bool:
    """Whether the scrubber finds anything in ``text`` (its rules are fixed, so the answer is):
    topics, outcomes and situations recur across a peer's lessons, and each scan costs tens of µs."""
    return bool(findings(text))


def sign(record: Record, signing_key: nacl.signing.SigningKey) -> SignedRecord:
    """Sign a record with its author's key.

    The last privacy gate: a record whose words the scrubber would still change is refused
    (``commons.core.policy.scrubber.ScrubbedTextRequired``, naming the field and the kinds found, never the
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
    record, rid = _check_body(body, signature, network, today + FUTURE_TOLERANCE_DAYS, claimed_id, body_id)
    try:
        nacl.bindings.crypto_sign_open(signature + _DOMAIN_TAGS[type(record).type] + rid, record.author)
    except (nacl.exceptions.BadSignatureError, ValueError):
        raise InvalidRecord(Problem.BAD_SIGNATURE, _FORGED) from None
    return _signed(record, body, rid, signature)


# Records a batch's signatures are checked by, when a pool checks them: large enough that handing
# one to a thread costs little beside 250 checks of ~40 µs, small enough that the caller's thread
# decodes the next while the pool checks this one.
VERIFY_CHUNK = 250


def verify_many(
    items: Sequence[tuple[bytes, bytes]],
    *,
    network: bytes,
    today: int,
    claimed_ids: Sequence[bytes | None] | None = None,
    body_ids: Sequence[bytes | None] | None = None,
    pool: Executor | None = None,
) -> list[SignedRecord | InvalidRecord]:
    """:func:`verify` of each (body, signature): the record, or the error saying what is wrong
    with it, in order. The verdicts are verify's; the work is done in two passes (every body, then
    every signature), so that the decoder and libsodium each run with the CPU's caches their own,
    which costs measurably less than alternating them (``tests/benchmarks/bench_intake.py``).

    With a ``pool`` (threads: :func:`signature_pool`), the signatures of each chunk of
    ``VERIFY_CHUNK`` records are checked there while this thread decodes the next chunk; libsodium
    runs without the GIL, so that uses more than one core. Without one, all of it runs here, on one.
    """
    if pool is None:
        return _check_signatures(items, 0, _check_bodies(items, 0, len(items), network, today, claimed_ids, body_ids))
    chunks = []
    for start in range(0, len(items), VERIFY_CHUNK):
        checked = _check_bodies(items, start, min(start + VERIFY_CHUNK, len(items)), network, today,
                                claimed_ids, body_ids)
        chunks.append(pool.submit(_check_signatures, items, start, checked))
    return [verdict for chunk in chunks for verdict in chunk.result()]


def signature_pool(threads: int) -> ThreadPoolExecutor:
    """Threads for :func:`verify_many` to check signatures in; the caller shuts it down."""
    if threads < 1:
        raise RecordUsageError(f"a signature pool needs at least one thread, not {threads}")
    return ThreadPoolExecutor(threads, thread_name_prefix="commons-verify")


def _check_body(body: bytes, signature: bytes, network: bytes, latest: int, claimed_id: bytes | None,
                body_id: bytes | None) -> tuple[Record, bytes]:
    """Everything verify checks but the signature itself: the record and its id. ``latest`` is the
    last day a record may be dated."""
    record = decode_body(body)
    rid = blake3(body).digest() if body_id is None else body_id
    if claimed_id is not None and claimed_id != rid:
        raise InvalidRecord(Problem.ID_MISMATCH, "the record's id does not match its body")
    if record.network != network:
        raise InvalidRecord(Problem.WRONG_NETWORK, "the record belongs to another network")
    if record.created > latest:
        raise InvalidRecord(Problem.FUTURE, f"the record is dated day {record.created}, in the future")
    if not isinstance(signature, bytes) or len(signature) != SIGNATURE_BYTES:
        raise InvalidRecord(Problem.BAD_SIGNATURE, f"a signature is {SIGNATURE_BYTES} bytes")
    return record, rid


def _check_bodies(items: Sequence[tuple[bytes, bytes]], start: int, end: int, network: bytes, today: int,
                  claimed_ids: Sequence[bytes | None] | None, body_ids: Sequence[bytes | None] | None,
                  ) -> list[tuple[Record, bytes] | InvalidRecord]:
    """:func:`_check_body` of items[start:end]: the record and its id, or the error.

    The common case (a body the fast decoder accepts, its id given, no id claimed, of this
    network, not from the future, a signature of the right length) is decided inline, one
    comparison each; anything else goes through :func:`_check_body`, which names the problem."""
    latest = today + FUTURE_TOLERANCE_DAYS
    checked: list[tuple[Record, bytes] | InvalidRecord] = []
    append, fast = checked.append, _decode_canonical
    for index in range(start, end):
        body, signature = items[index]
        rid = None if body_ids is None else body_ids[index]
        record = fast(body) if type(body) is bytes and len(body) <= MAX_BODY_BYTES else None
        if (record is None or rid is None or claimed_ids is not None or record.network != network
                or record.created > latest or type(signature) is not bytes or len(signature) != SIGNATURE_BYTES):
            try:
                append(_check_body(body, signature, network, latest,
                                   None if claimed_ids is None else claimed_ids[index], rid))
            except InvalidRecord as error:
                append(error)
        else:
            append((record, rid))
    return checked


_FORGED = "the signature does not verify with the author's key"


def _check_signatures(items: Sequence[tuple[bytes, bytes]], start: int,
                      checked: list[tuple[Record, bytes] | InvalidRecord]) -> list[SignedRecord | InvalidRecord]:
    """The verdict on each of items[start:] that ``checked`` holds, its signature checked."""
    verdicts: list[SignedRecord | InvalidRecord] = []
    append, tags, new, set_dict = verdicts.append, _DOMAIN_TAGS, _new, _set
    open_signed = nacl.bindings.crypto_sign_open  # looked up per call, so that a test can count checks
    for index, outcome in enumerate(checked, start):
        if type(outcome) is tuple:
            record, rid = outcome
            body, signature = items[index]
            try:
                open_signed(signature + tags[record.type] + rid, record.author)
            except (nacl.exceptions.BadSignatureError, ValueError):
                outcome = InvalidRecord(Problem.BAD_SIGNATURE, _FORGED)
            else:  # built as _signed builds it, inline
                outcome = new(SignedRecord)
                set_dict(outcome, "__dict__", {"record": record, "body": body, "id": rid, "signature": signature})
        append(outcome)
    return verdicts


def _signed(record: Record, body: bytes, rid: bytes, signature: bytes) -> SignedRecord:
    # Built as the decoder builds records: the frozen dataclass's __init__ sets each field through
    # object.__setattr__, which costs three times this.
    signed = _new(SignedRecord)
    _set(signed, "__dict__", {"record": record, "body": body, "id": rid, "signature": signature})
    return signed


_new = object.__new__
_set = object.__setattr__
