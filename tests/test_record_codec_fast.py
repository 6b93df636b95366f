"""The fast record decoder accepts exactly what the reference decoder accepts, and nothing else.

``decode_body`` tries ``_decode_canonical`` (msgspec decodes the body into its type's Struct, the
Struct is encoded again and compared with the body, the field rules run once) and, when it
declines, the reference decoder (msgpack) that names the problem.
The fast path is only safe if it never accepts a body the reference refuses, and only useful if it
accepts every body the reference accepts: both are tested here, on the vectors and on mutations.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commons.core import records as rec
from commons.core.records import codec
from tests import fuzzing

VECTORS = json.loads((Path(__file__).parents[1] / "protocol" / "vectors" / "records.json").read_text())
BODIES = [bytes.fromhex(case["body_hex"]) for case in VECTORS["tests"]]
VALID = [bytes.fromhex(c["body_hex"]) for c in VECTORS["tests"] if c["result"] == "valid"]
NET, AUTHOR, OTHER = bytes(range(32)), bytes([7]) * 32, bytes([9]) * 32


def _reference(body: bytes) -> rec.Record | None:
    try:
        return codec._decode_naming_the_problem(body)
    except rec.InvalidRecord:
        return None


def _lesson(**changes) -> dict:
    """A lesson's wire map (the dict decode sees), before packing; ``changes`` replace fields."""
    wire = msgpack.unpackb(rec.encode_body(rec.Lesson(
        network=NET, author=AUTHOR, created=20_400, kind=rec.LessonKind.ERROR, text="pip fails",
        scope=rec.Scope.SHARED, topics=("pip", "python"), prediction=rec.Prediction("pip install", "error"),
        episodes=(bytes([1]) * 32, bytes([2]) * 32),
    )))
    wire.update(changes)
    return wire


def _verification(**changes) -> dict:
    wire = msgpack.unpackb(rec.encode_body(rec.Verification(
        network=NET, author=AUTHOR, created=20_402, lesson=OTHER, outcome=rec.Outcome.CONFIRMED,
        evidence=bytes([3]) * 32, received=20_400, observed=20_401, naive=True,
    )))
    wire.update(changes)
    return wire


def _packed(wire: dict) -> bytes:
    return msgpack.packb(wire, use_bin_type=True)


@pytest.mark.parametrize("body", VALID, ids=range(len(VALID)))
def test_every_valid_vector_is_decoded_by_the_fast_path_to_the_reference_record(body: bytes) -> None:
    fast = codec._decode_canonical(body)
    assert fast is not None
    assert fast == _reference(body)
    assert rec.encode_body(fast) == body


@pytest.mark.parametrize("case", [c for c in VECTORS["tests"] if c["result"] == "invalid"], ids=lambda c: c["tcId"])
def test_the_fast_path_never_accepts_a_body_the_reference_refuses(case: dict) -> None:
    body = bytes.fromhex(case["body_hex"])
    if _reference(body) is None:
        assert codec._decode_canonical(body) is None


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rng=st.randoms(use_true_random=False), rounds=st.integers(1, 4))
def test_on_mutated_bodies_the_fast_path_and_the_reference_agree(rng, rounds) -> None:
    body = fuzzing.mutate(rng.choice(VALID), rng, VALID, rounds)
    fast, reference = codec._decode_canonical(body), _reference(body)
    assert (fast is None) == (reference is None), body.hex()
    assert fast == reference


@pytest.mark.parametrize(
    "wire",
    [
        _lesson(created=True),  # msgpack true where a day belongs
        _lesson(created=20_400.0),  # a float where a day belongs
        _lesson(created=-1),
        _lesson(v=True),
        _lesson(v=1.0),
        _lesson(author=AUTHOR[:31]),
        _lesson(author="x" * 32),  # a string where bytes belong
        _lesson(text=b"pip fails"),  # bytes where a string belongs
        _lesson(text=""),
        _lesson(text="pip\x00fails"),
        _lesson(text="cafe\u0301"),  # not NFC
        _lesson(kind="Error"),
        _lesson(kind=1),
        _lesson(topics=["python", "pip"]),  # unsorted
        _lesson(topics=["pip", "pip"]),  # repeated
        _lesson(topics=["pip", b"python"]),  # mixed kinds
        _lesson(episodes=[bytes([1]) * 32, "x"]),
        _lesson(prediction={"outcome": "error", "situation": "pip install"}),  # keys out of order
        _lesson(prediction=["pip install", "error"]),
        _lesson(supersedes=b""),
        _verification(naive=1),  # an int where a boolean belongs
        _verification(observed=20_399),  # before received
        _verification(created=20_400),  # before observed
        _verification(outcome="maybe"),
    ],
    ids=range(24),
)
def test_an_ill_typed_or_ruled_out_field_is_refused_by_both_paths(wire: dict) -> None:
    body = _packed(wire)
    assert codec._decode_canonical(body) is None
    with pytest.raises(rec.InvalidRecord):
        rec.decode_body(body)


def _with_fix_key(wire: dict, after: str, value) -> dict:
    """``wire`` with a ``fix`` entry right after ``after``, where a version 2 body has it."""
    out = {}
    for key, item in wire.items():
        out[key] = item
        if key == after:
            out["fix"] = value
    return out


_FIX = {"tool": "Bash", "failed": "pip install x", "step": "uv pip install x"}


@pytest.mark.parametrize(
    "wire",
    [
        _with_fix_key(_lesson(), "supersedes", _FIX),  # a fix in a version 1 lesson
        _lesson(v=2),  # a version 2 lesson without its fix
        _with_fix_key(_lesson(v=2), "supersedes", None),  # ... or with a nil one
        _with_fix_key(_lesson(v=2), "supersedes", dict(reversed(list(_FIX.items())))),  # the fix's keys reordered
        _with_fix_key(_lesson(v=2), "supersedes", {**_FIX, "more": "x"}),  # the fix with a key too many
        _with_fix_key(_verification(), "outcome", "fix-confirmed"),  # a fix in a version 1 verification
        _with_fix_key(_verification(v=2), "outcome", None),  # a version 2 verification with a nil fix
        _with_fix_key(_verification(v=2), "outcome", "fixed"),  # ... or one no verification says
        _lesson(v=3),  # a version no node speaks
        {**_lesson(), "more": 1},  # a key the type does not have
        {key: value for key, value in _lesson().items() if key != "scope"},  # a key missing
    ],
    ids=range(11),
)
def test_a_body_whose_version_and_fix_disagree_or_whose_keys_are_not_the_type_s_is_refused_by_both(wire) -> None:
    body = _packed(wire)
    assert codec._decode_canonical(body) is None
    with pytest.raises(rec.InvalidRecord):
        rec.decode_body(body)


def test_a_version_2_body_with_its_fix_where_it_belongs_is_taken_by_the_fast_path() -> None:
    body = _packed(_with_fix_key(_lesson(v=2), "supersedes", _FIX))
    fast = codec._decode_canonical(body)
    assert fast is not None and fast == _reference(body) and fast.fix == rec.Fix(**_FIX)
    body = _packed(_with_fix_key(_verification(v=2), "outcome", "other-fix"))
    fast = codec._decode_canonical(body)
    assert fast is not None and fast == _reference(body) and fast.fix is rec.FixSeen.OTHER


def test_a_repeated_key_is_declined_by_the_fast_path_and_named_by_the_reference() -> None:
    body = _packed(_lesson())
    # The map gains one entry: "created" a second time, with the same value.
    repeated = bytes([body[0] + 1]) + body[1:] + _packed({"created": 20_400})[1:]
    assert codec._decode_canonical(repeated) is None
    with pytest.raises(rec.InvalidRecord) as raised:
        rec.decode_body(repeated)
    assert raised.value.problem is rec.Problem.DUPLICATE_KEY


def test_a_longer_encoding_of_the_same_values_is_declined_by_the_fast_path() -> None:
    body = _packed(_lesson())
    longer = body.replace(b"\xa7created\xcd", b"\xd9\x07created\xcd", 1)  # str8 header for a fixstr
    assert longer != body and msgpack.unpackb(longer) == msgpack.unpackb(body)
    assert codec._decode_canonical(longer) is None
    with pytest.raises(rec.InvalidRecord) as raised:
        rec.decode_body(longer)
    assert raised.value.problem is rec.Problem.NON_CANONICAL


def test_a_record_built_by_the_decoder_equals_the_one_its_dataclass_builds() -> None:
    record = rec.Verification(network=NET, author=AUTHOR, created=20_402, lesson=OTHER,
                              outcome=rec.Outcome.FAILED, evidence=bytes([3]) * 32, received=20_400,
                              observed=20_401, naive=False)
    decoded = rec.decode_body(rec.encode_body(record))
    assert decoded == record and hash(decoded) == hash(record) and vars(decoded) == vars(record)
    with pytest.raises(AttributeError):  # still frozen
        decoded.naive = True


def test_the_dataclass_refuses_a_bool_for_a_day_as_the_decoder_does() -> None:
    with pytest.raises(rec.RecordUsageError):
        rec.Vouch(network=NET, author=AUTHOR, created=True, subject=OTHER)


def test_record_types_keep_their_identity_and_hash_through_pickling() -> None:
    for rtype in rec.RecordType:
        again = pickle.loads(pickle.dumps(rtype))
        assert again is rtype and {rtype: 1}[again] == 1


def test_verify_many_gives_verify_s_verdict_for_each_record_in_order() -> None:
    key = __import__("nacl.signing").signing.SigningKey(bytes(range(32)))
    author = bytes(key.verify_key)
    good = [rec.sign(rec.Vouch(network=NET, author=author, created=20_400, subject=bytes([n]) * 32), key)
            for n in range(3)]
    forged = bytes([good[1].signature[0] ^ 1]) + good[1].signature[1:]
    items = [(good[0].body, good[0].signature), (good[1].body, forged), (b"\x80", good[2].signature),
             (good[2].body, good[2].signature)]
    verdicts = rec.verify_many(items, network=NET, today=20_400)
    assert verdicts[0] == good[0] and verdicts[3] == good[2]
    for verdict, (body, signature) in zip(verdicts[1:3], items[1:3]):
        with pytest.raises(rec.InvalidRecord) as raised:
            rec.verify(body, signature, network=NET, today=20_400)
        assert type(verdict) is rec.InvalidRecord and verdict.problem is raised.value.problem
    wrong_id = rec.verify_many(items[:1], network=NET, today=20_400, claimed_ids=[bytes(32)])
    assert wrong_id[0].problem is rec.Problem.ID_MISMATCH


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("x" * rec.MAX_TEXT_BYTES, None),
        ("line one\nline two", None),  # a newline is the one control character allowed
        ("é" * (rec.MAX_TEXT_BYTES // 2), None),
        ("x" * (rec.MAX_TEXT_BYTES + 1), rec.Problem.OVERSIZE),
        ("é" * (rec.MAX_TEXT_BYTES // 2 + 1), rec.Problem.OVERSIZE),
        ("tab\there", rec.Problem.BAD_FIELD),
        ("delete\x7f", rec.Problem.BAD_FIELD),
        ("c1 control\x85", rec.Problem.BAD_FIELD),
    ],
    ids=range(8),
)
def test_a_text_at_and_past_each_limit_gets_the_same_verdict_from_both_paths(text, problem) -> None:
    body = _packed(_lesson(text=text))
    fast = codec._decode_canonical(body)
    if problem is None:
        assert fast is not None and fast.text == text and rec.decode_body(body) == fast
    else:
        assert fast is None
        with pytest.raises(rec.InvalidRecord) as raised:
            rec.decode_body(body)
        assert raised.value.problem is problem


def test_verify_many_with_a_signature_pool_gives_the_verdicts_of_one_thread_across_chunks() -> None:
    key = __import__("nacl.signing").signing.SigningKey(bytes(range(32)))
    author = bytes(key.verify_key)
    count = rec.signing.VERIFY_CHUNK * 2 + 7  # three chunks, the last one short
    good = [rec.sign(rec.Vouch(network=NET, author=author, created=20_400, subject=n.to_bytes(32, "big")), key)
            for n in range(count)]
    items = [(s.body, s.signature) for s in good]
    for at in (0, rec.signing.VERIFY_CHUNK - 1, rec.signing.VERIFY_CHUNK, count - 1):  # chunk edges
        items[at] = (items[at][0], bytes(64))
    items[5] = (b"\x80", items[5][1])
    alone = rec.verify_many(items, network=NET, today=20_400)
    with rec.signature_pool(2) as pool:
        pooled = rec.verify_many(items, network=NET, today=20_400, pool=pool)
    assert len(pooled) == count
    assert [type(v) for v in pooled] == [type(v) for v in alone]
    assert [v.problem if type(v) is rec.InvalidRecord else v for v in pooled] == [
        v.problem if type(v) is rec.InvalidRecord else v for v in alone]
    assert sum(type(v) is rec.InvalidRecord for v in pooled) == 5


def test_a_signature_pool_of_no_threads_is_the_caller_s_mistake() -> None:
    with pytest.raises(rec.RecordUsageError):
        rec.signature_pool(0)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rng=st.randoms(use_true_random=False), rounds=st.integers(0, 3), cut=st.integers(0, 12))
def test_the_peeked_type_of_a_body_is_the_type_it_decodes_to(rng, rounds, cut) -> None:
    seed = rng.choice(VALID)
    body = fuzzing.mutate(seed, rng, VALID, rounds) if rounds else seed
    assert rec.peek_type(body[:cut]) is None or cut > 6
    peeked, decoded = rec.peek_type(body), _reference(body)
    if decoded is not None:
        assert peeked is type(decoded).type
    if rounds == 0:
        assert peeked is type(decoded).type
