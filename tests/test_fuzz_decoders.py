"""Bounded-time fuzzing of the decoders that take peers' bytes (each test a second or two).

The mutations and oracles are ``tests/fuzzing.py``'s; ``make fuzz`` runs them over millions of
inputs. Here hypothesis drives them, so a failure shrinks to a small input and is replayed."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commons.core.records.types import build_checked
from tests import fuzzing
from tests.fuzzing import Verdict

TARGETS = {t.name: t for t in fuzzing.targets()}
GOOD = (Verdict.ACCEPTED, Verdict.REFUSED)


@pytest.mark.parametrize("name", sorted(TARGETS))
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rng=st.randoms(use_true_random=False), rounds=st.integers(1, 4))
def test_mutated_seeds_are_refused_or_accepted_for_what_they_are(name, rng, rounds):
    target = TARGETS[name]
    data = fuzzing.mutate(rng.choice(target.seeds), rng, target.seeds, rounds)
    assert target.judge(data) in GOOD, data.hex()


@pytest.mark.parametrize("name", sorted(TARGETS))
@settings(max_examples=500, deadline=None)
@given(data=st.binary(max_size=300))
def test_arbitrary_bytes_are_refused_or_accepted_for_what_they_are(name, data):
    assert TARGETS[name].judge(data) in GOOD, data.hex()


def test_the_record_oracle_calls_a_second_body_invalid_accepted(monkeypatch):
    body = fuzzing.record_seeds()[0]
    assert fuzzing.judge_record(body) is Verdict.ACCEPTED
    original = fuzzing.rec.decode_body
    lenient = body.replace(b"\xa1v\x01", b"\xa1v\xc3", 1)  # v: true, as a lenient decoder would take it
    monkeypatch.setattr(fuzzing.rec, "decode_body", lambda b: original(body) if b == lenient else original(b))
    assert fuzzing.judge_record(lenient) is Verdict.INVALID_ACCEPTED


def test_the_record_oracle_calls_a_bool_day_that_round_trips_invalid_accepted(monkeypatch):
    record = fuzzing.rec.decode_body(fuzzing.record_seeds()[0])
    # A decoder that took msgpack true for a day: its record encodes back to the very body, so only
    # the reference decoder's verdict shows that it should not have been accepted.
    lenient = build_checked(type(record), {**vars(record), "created": True})
    body = fuzzing.rec.encode_body(lenient)
    original = fuzzing.rec.decode_body
    monkeypatch.setattr(fuzzing.rec, "decode_body", lambda b: lenient if b == body else original(b))
    assert fuzzing.judge_record(body) is Verdict.INVALID_ACCEPTED


def test_the_box_stream_oracle_calls_forged_plaintext_invalid_accepted(monkeypatch):
    monkeypatch.setattr(fuzzing, "BoxStreamDecoder", lambda key, nonce: type("Forger", (), {
        "feed": lambda self, data: [b"not what was sent"]})())
    assert fuzzing.judge_box(fuzzing.box_seed()) is Verdict.INVALID_ACCEPTED
