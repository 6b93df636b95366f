"""Signed, content-addressed records: the only things that ever leave a node.

Four record types travel between nodes: a **lesson** (an observation with a prediction), a
**verification** (a node's report that a lesson predicted, or failed to predict, what its own
sessions met, and what happened to the fix the lesson names), a **revocation** (of a record or of an author key) and a **vouch** (one key
vouching for another). Each is a frozen dataclass here; on the wire each is a *body*, a *signature*
and an *id*:

- the body is one canonical msgpack map whose keys stand in the order this module lists them
  (``codec._LAYOUT``), encoded in the shortest form msgpack allows; there is exactly one valid encoding
  of every record, and decoding refuses every other (``decode_body``);
- ``id = BLAKE3-256(body)``; the body names the network and the author's public key, so whoever
  signs is part of what is hashed and nobody can re-sign another's record under the same id;
- ``signature = Ed25519(author, domain_tag(type) || id)``.

Records never change. What a node thinks of a record (strength, status) is local state, kept
elsewhere. ``protocol/PROTOCOL.md`` is the normative description of all of this; the test vectors
in ``protocol/vectors/records.json`` are generated from this package.

The package has one module per concept, and this module re-exports the public names of each,
so ``from commons.core import records`` is all a caller needs:

- ``types``: constants, enums, errors, field rules and the four record dataclasses;
- ``codec``: the canonical body encoding and the strict decoder (``encode_body``, ``decode_body``,
  ``peek_type``), whose fast path decodes a body into its type's msgspec Struct (``schema``) and
  runs a decoder per type and version that ``compiled`` generates, both from the field specs
  (internal: nothing of either is re-exported);
- ``signing``: ids, keys, signatures and the receiver's check (``sign``, ``verify``,
  ``verify_many`` for a batch, on more than one core given a ``signature_pool``, ``received_key``
  to dedupe by before it);
- ``hashing``: the keyed hashes by which a node names its own episodes in provenance and evidence
  without revealing them (``episode_hash``, ``evidence_hash``).

Two error classes say whose fault a problem is: :class:`InvalidRecord` (bytes from outside — a peer,
a file — are not a valid record; the sender is at fault) and :class:`RecordUsageError` (this
program asked for a record that cannot exist; the caller is at fault).
"""

from __future__ import annotations

from commons.core.records.types import (
    FIX_VERSION,
    FUTURE_TOLERANCE_DAYS,
    Fix,
    FixSeen,
    InvalidRecord,
    KEY_BYTES,
    Lesson,
    LessonKind,
    MAX_BODY_BYTES,
    MAX_EPISODES,
    MAX_FIX_STEP_BYTES,
    MAX_FIX_TOOL_BYTES,
    MAX_PARENTS,
    MAX_PREDICTION_PART_BYTES,
    MAX_REASON_BYTES,
    MAX_TEXT_BYTES,
    MAX_TOPICS,
    MAX_TOPIC_BYTES,
    Outcome,
    PROTOCOL_VERSION,
    Prediction,
    Problem,
    RECORD_CLASSES,
    Record,
    RecordError,
    RecordType,
    RecordUsageError,
    Revocation,
    SECONDS_PER_DAY,
    SIGNATURE_BYTES,
    Scope,
    TargetKind,
    Verification,
    Vouch,
    as_plain,
    day_of,
    field_names,
)
from commons.core.records.codec import (
    decode_body,
    encode_body,
    peek_created,
    peek_type,
)
from commons.core.records.signing import (
    SignedRecord,
    received_key,
    reconcile_key,
    record_id,
    sign,
    signature_pool,
    signed_message,
    text_refusal,
    verify,
    verify_many,
)
from commons.core.records.hashing import episode_hash, evidence_hash

__all__ = [
    "FIX_VERSION",
    "FUTURE_TOLERANCE_DAYS",
    "Fix",
    "FixSeen",
    "InvalidRecord",
    "KEY_BYTES",
    "Lesson",
    "LessonKind",
    "MAX_BODY_BYTES",
    "MAX_EPISODES",
    "MAX_FIX_STEP_BYTES",
    "MAX_FIX_TOOL_BYTES",
    "MAX_PARENTS",
    "MAX_PREDICTION_PART_BYTES",
    "MAX_REASON_BYTES",
    "MAX_TEXT_BYTES",
    "MAX_TOPICS",
    "MAX_TOPIC_BYTES",
    "Outcome",
    "PROTOCOL_VERSION",
    "Prediction",
    "Problem",
    "RECORD_CLASSES",
    "Record",
    "RecordError",
    "RecordType",
    "RecordUsageError",
    "Revocation",
    "SECONDS_PER_DAY",
    "SIGNATURE_BYTES",
    "Scope",
    "SignedRecord",
    "TargetKind",
    "Verification",
    "Vouch",
    "as_plain",
    "day_of",
    "decode_body",
    "encode_body",
    "episode_hash",
    "evidence_hash",
    "field_names",
    "peek_created",
    "peek_type",
    "received_key",
    "reconcile_key",
    "record_id",
    "sign",
    "signature_pool",
    "signed_message",
    "text_refusal",
    "verify",
    "verify_many",
]
