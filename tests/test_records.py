"""Records: round trips of every type, tamper resistance, and whose fault each refusal is."""

from __future__ import annotations

import unicodedata
from typing import Any

import msgpack
import nacl.signing
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commons.core.records.hashing import episode_hash, evidence_hash, keyed_hash
from commons.core.records import (
    FUTURE_TOLERANCE_DAYS,
    MAX_BODY_BYTES,
    MAX_EPISODES,
    MAX_PARENTS,
    MAX_PREDICTION_PART_BYTES,
    MAX_REASON_BYTES,
    MAX_TEXT_BYTES,
    MAX_TOPIC_BYTES,
    MAX_TOPICS,
    InvalidRecord,
    Lesson,
    LessonKind,
    Outcome,
    Prediction,
    Problem,
    RecordError,
    RecordUsageError,
    Revocation,
    Scope,
    TargetKind,
    Verification,
    Vouch,
    decode_body,
    encode_body,
    record_id,
    sign,
    verify,
)

NETWORK = bytes(range(32))
AUTHOR = nacl.signing.SigningKey(b"\x01" * 32)
OTHER = nacl.signing.SigningKey(b"\x02" * 32)
TODAY = 20000
LAST_DAY = 2**32 - 1  # as `today`, nothing is from the future

# --- strategies: valid field values, unicode included -------------------------------------------

keys = st.binary(min_size=32, max_size=32)
days = st.integers(min_value=0, max_value=LAST_DAY)
signing_keys = st.binary(min_size=32, max_size=32).map(nacl.signing.SigningKey)
_chars = st.characters(blacklist_categories=("Cc", "Cs")) | st.just("\n")


def texts(max_bytes: int) -> st.SearchStrategy[str]:
    # A character is at most 4 UTF-8 bytes; NFC may still grow a string, hence the filter.
    return (
        st.text(_chars, min_size=1, max_size=max_bytes // 4)
        .map(lambda s: unicodedata.normalize("NFC", s))
        .filter(lambda s: 0 < len(s.encode()) <= max_bytes)
    )


def sorted_unique(elements: st.SearchStrategy, limit: int) -> st.SearchStrategy[tuple]:
    return st.lists(elements, max_size=limit, unique=True).map(lambda xs: tuple(sorted(xs)))


@st.composite
def lessons(draw: st.DrawFn, author: bytes) -> Lesson:
    return Lesson(
        network=draw(keys),
        author=author,
        created=draw(days),
        kind=draw(st.sampled_from(LessonKind)),
        text=draw(texts(MAX_TEXT_BYTES)),
        scope=draw(st.sampled_from(Scope)),
        topics=draw(sorted_unique(texts(MAX_TOPIC_BYTES), MAX_TOPICS)),
        prediction=Prediction(draw(texts(MAX_PREDICTION_PART_BYTES)), draw(texts(MAX_PREDICTION_PART_BYTES))),
        parents=draw(sorted_unique(keys, MAX_PARENTS)),
        episodes=draw(sorted_unique(keys, MAX_EPISODES)),
        supersedes=draw(st.none() | keys),
    )


@st.composite
def verifications(draw: st.DrawFn, author: bytes) -> Verification:
    received, observed, created = sorted(draw(st.lists(days, min_size=3, max_size=3)))
    return Verification(
        network=draw(keys),
        author=author,
        created=created,
        lesson=draw(keys),
        outcome=draw(st.sampled_from(Outcome)),
        evidence=draw(keys),
        received=received,
        observed=observed,
        naive=draw(st.booleans()),
    )


@st.composite
def revocations(draw: st.DrawFn, author: bytes) -> Revocation:
    return Revocation(
        network=draw(keys),
        author=author,
        created=draw(days),
        target=draw(keys),
        target_kind=draw(st.sampled_from(TargetKind)),
        reason=draw(texts(MAX_REASON_BYTES)),
    )


@st.composite
def vouches(draw: st.DrawFn, author: bytes) -> Vouch:
    subject = draw(keys.filter(lambda k: k != author))
    return Vouch(network=draw(keys), author=author, created=draw(days), subject=subject)


@st.composite
def signed_records(draw: st.DrawFn):
    key = draw(signing_keys)
    kind = draw(st.sampled_from([lessons, verifications, revocations, vouches]))
    record = draw(kind(bytes(key.verify_key)))
    return record, key


# --- properties --------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(signed_records())
def test_every_record_round_trips_through_its_body_and_signature(drawn) -> None:
    record, key = drawn
    body = encode_body(record)
    assert decode_body(body) == record
    signed = sign(record, key)
    accepted = verify(signed.body, signed.signature, network=record.network, today=LAST_DAY, claimed_id=signed.id)
    assert accepted == signed
    assert accepted.record == record
    assert signed.id == record_id(body)


@settings(max_examples=300, deadline=None)
@given(signed_records(), st.data())
def test_any_single_byte_change_never_verifies_under_the_original_id(drawn, data) -> None:
    record, key = drawn
    signed = sign(record, key)
    index = data.draw(st.integers(0, len(signed.body) - 1), label="index")
    value = data.draw(st.integers(0, 255).filter(lambda b: b != signed.body[index]), label="byte")
    changed = signed.body[:index] + bytes([value]) + signed.body[index + 1 :]
    assert record_id(changed) != signed.id
    with pytest.raises(InvalidRecord):
        verify(changed, signed.signature, network=record.network, today=LAST_DAY, claimed_id=signed.id)
    try:
        accepted = verify(changed, signed.signature, network=record.network, today=LAST_DAY)
    except InvalidRecord:
        return
    assert accepted.id != signed.id  # only reachable through a signature forgery


# --- each error class, from outside ------------------------------------------------------------


def _lesson(**changes: Any) -> Lesson:
    fields: dict[str, Any] = dict(
        network=NETWORK,
        author=bytes(AUTHOR.verify_key),
        created=TODAY,
        kind=LessonKind.ERROR,
        text="git push is refused on main; use a branch",
        scope=Scope.SHARED,
        topics=("git",),
        prediction=Prediction("git push to main", "the push is refused"),
    )
    fields.update(changes)
    return Lesson(**fields)


def _wire(record: Any = None) -> dict[str, Any]:
    """A valid body as an ordered dict, to edit and re-pack (dicts keep their insertion order)."""
    return msgpack.unpackb(encode_body(record or _lesson()), raw=False)


def _pack(wire: dict[str, Any]) -> bytes:
    return msgpack.packb(wire, use_bin_type=True)


def _refusal(body: bytes, signature: bytes | None = None, **kwargs: Any) -> Problem:
    if signature is None:
        signature = AUTHOR.sign(b"commons/v1/lesson\n" + record_id(body)).signature
    kwargs.setdefault("network", NETWORK)
    kwargs.setdefault("today", TODAY)
    with pytest.raises(InvalidRecord) as refused:
        verify(body, signature, **kwargs)
    return refused.value.problem


def test_bytes_that_are_not_msgpack_are_malformed() -> None:
    assert _refusal(b"\xc1") is Problem.MALFORMED
    assert _refusal(encode_body(_lesson())[:-3]) is Problem.MALFORMED


def test_bytes_after_the_body_are_refused_as_trailing() -> None:
    assert _refusal(encode_body(_lesson()) + b"\x00") is Problem.TRAILING_BYTES


def test_a_longer_encoding_than_needed_is_non_canonical() -> None:
    body = encode_body(_lesson())
    assert body.endswith(b"\xa7created\xcd" + TODAY.to_bytes(2, "big"))
    longer = body[:-3] + b"\xce" + TODAY.to_bytes(4, "big")
    assert _refusal(longer) is Problem.NON_CANONICAL


def test_a_repeated_map_key_is_refused_as_duplicate() -> None:
    body = encode_body(_lesson())
    assert body[0] == 0x8D  # fixmap of 13 entries
    repeated = b"\x8e" + body[1:-11] + b"\xa5scope\xa6shared" + body[-11:]
    assert _refusal(repeated) is Problem.DUPLICATE_KEY


def test_text_over_the_limit_is_oversize_and_so_is_a_huge_body() -> None:
    wire = _wire()
    wire["text"] = "a" * (MAX_TEXT_BYTES + 1)
    assert _refusal(_pack(wire)) is Problem.OVERSIZE
    assert _refusal(b"\x00" * (MAX_BODY_BYTES + 1)) is Problem.OVERSIZE  # refused before parsing


def test_unknown_type_and_unknown_version_are_refused_not_guessed() -> None:
    wire = _wire()
    wire["type"] = "poll"
    assert _refusal(_pack(wire)) is Problem.UNKNOWN_TYPE
    wire = _wire()
    wire["v"] = 3
    assert _refusal(_pack(wire)) is Problem.UNKNOWN_VERSION
    wire["type"] = "vouch"  # a vouch has only version 1
    wire["v"] = 2
    assert _refusal(_pack(wire)) is Problem.UNKNOWN_VERSION


def test_a_version_1_body_with_version_2_and_the_reverse_are_bad_fields() -> None:
    """The old/new mix: each version has its own layout, and a version 2 lesson names its fix."""
    wire = _wire()
    wire["v"] = 2  # a version 1 lesson's entries under version 2: no fix
    assert _refusal(_pack(wire)) is Problem.BAD_FIELD
    wire = _wire()
    fixed = {}
    for key, value in wire.items():
        fixed[key] = value
        if key == "supersedes":
            fixed["fix"] = {"tool": "Bash", "failed": "pip install <package>", "step": "uv add <package>"}
    assert decode_body(_pack({**fixed, "v": 2})).fix.step == "uv add <package>"
    assert _refusal(_pack(fixed)) is Problem.BAD_FIELD  # a fix in a version 1 lesson
    assert _refusal(_pack({**fixed, "v": 2, "fix": None})) is Problem.BAD_FIELD  # version 2 with nil


def test_a_missing_field_is_a_bad_field() -> None:
    wire = _wire()
    del wire["supersedes"]
    assert _refusal(_pack(wire)) is Problem.BAD_FIELD


def test_a_string_that_is_not_utf8_is_refused() -> None:
    body = encode_body(_lesson(text="caf!"))
    assert _refusal(body.replace(b"\xa4caf!", b"\xa4caf\xff")) is Problem.INVALID_UTF8


def test_decomposed_text_is_refused_as_not_nfc() -> None:
    wire = _wire()
    wire["text"] = "cafe\u0301"
    assert _refusal(_pack(wire)) is Problem.NOT_NFC


def test_a_control_character_other_than_newline_is_a_bad_field() -> None:
    wire = _wire()
    wire["text"] = "red\x1b[0m"
    assert _refusal(_pack(wire)) is Problem.BAD_FIELD


def test_a_record_two_days_ahead_is_from_the_future_but_one_day_is_tolerated() -> None:
    ahead = sign(_lesson(created=TODAY + FUTURE_TOLERANCE_DAYS + 1), AUTHOR)
    assert _refusal(ahead.body, ahead.signature) is Problem.FUTURE
    tomorrow = sign(_lesson(created=TODAY + FUTURE_TOLERANCE_DAYS), AUTHOR)
    assert verify(tomorrow.body, tomorrow.signature, network=NETWORK, today=TODAY) == tomorrow


def test_a_record_of_another_network_is_refused() -> None:
    signed = sign(_lesson(network=b"\xee" * 32), AUTHOR)
    assert _refusal(signed.body, signed.signature) is Problem.WRONG_NETWORK


def test_a_signature_by_another_key_than_the_author_is_refused() -> None:
    body = encode_body(_lesson())
    forged = OTHER.sign(b"commons/v1/lesson\n" + record_id(body)).signature
    assert _refusal(body, forged) is Problem.BAD_SIGNATURE


def test_a_signature_for_another_record_type_is_refused() -> None:
    body = encode_body(_lesson())
    cross = AUTHOR.sign(b"commons/v1/verification\n" + record_id(body)).signature
    assert _refusal(body, cross) is Problem.BAD_SIGNATURE


def test_a_claimed_id_that_does_not_match_the_body_is_refused() -> None:
    signed = sign(_lesson(), AUTHOR)
    assert _refusal(signed.body, signed.signature, claimed_id=b"\x00" * 32) is Problem.ID_MISMATCH


def test_refusals_of_outside_bytes_and_misuse_are_different_errors() -> None:
    assert issubclass(InvalidRecord, RecordError) and issubclass(RecordUsageError, RecordError)
    assert not issubclass(InvalidRecord, RecordUsageError) and not issubclass(RecordUsageError, InvalidRecord)
    with pytest.raises(RecordUsageError):
        decode_body("not bytes")  # type: ignore[arg-type]


# --- misuse of the API: the caller's fault -----------------------------------------------------


def test_signing_with_a_key_that_is_not_the_author_is_a_usage_error() -> None:
    with pytest.raises(RecordUsageError, match="not the record's author"):
        sign(_lesson(), OTHER)


def test_building_a_lesson_with_unsorted_topics_is_a_usage_error() -> None:
    with pytest.raises(RecordUsageError) as error:
        _lesson(topics=("pip", "git"))
    assert error.value.problem is Problem.NON_CANONICAL


def test_building_a_lesson_with_topics_of_mixed_types_is_a_usage_error() -> None:
    with pytest.raises(RecordUsageError) as error:
        _lesson(topics=("git", b"pip"))
    assert error.value.problem is Problem.BAD_FIELD


def test_building_a_lesson_with_oversize_text_is_a_usage_error_naming_oversize() -> None:
    with pytest.raises(RecordUsageError) as error:
        _lesson(text="a" * (MAX_TEXT_BYTES + 1))
    assert error.value.problem is Problem.OVERSIZE


def test_a_vouch_for_oneself_is_a_usage_error() -> None:
    author = bytes(AUTHOR.verify_key)
    with pytest.raises(RecordUsageError, match="vouch for itself"):
        Vouch(network=NETWORK, author=author, created=TODAY, subject=author)


def test_a_verification_observed_before_receipt_is_a_usage_error() -> None:
    with pytest.raises(RecordUsageError, match="observed must not be before received"):
        Verification(
            network=NETWORK,
            author=bytes(AUTHOR.verify_key),
            created=TODAY,
            lesson=b"\x03" * 32,
            outcome=Outcome.CONFIRMED,
            evidence=b"\x04" * 32,
            received=TODAY,
            observed=TODAY - 1,
            naive=True,
        )


# --- keyed hashes ------------------------------------------------------------------------------


def test_keyed_hashes_under_different_secrets_differ() -> None:
    assert episode_hash(b"\x01" * 32, "episode-1") != episode_hash(b"\x02" * 32, "episode-1")
    assert episode_hash(b"\x01" * 32, "episode-1") == episode_hash(b"\x01" * 32, "episode-1")


def test_episode_and_evidence_hashes_are_domain_separated() -> None:
    secret = b"\x07" * 32
    data = b"\x05" * 32 + b"episode-1"
    assert keyed_hash(secret, "commons/episode", data) != keyed_hash(secret, "commons/evidence", data)
    assert episode_hash(secret, "episode-1") != keyed_hash(secret, "commons/evidence", b"episode-1")
    assert evidence_hash(secret, b"\x05" * 32, "episode-1") == keyed_hash(secret, "commons/evidence", data)


def test_a_hashing_secret_of_the_wrong_length_is_refused() -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        episode_hash(b"short", "episode-1")
