"""protocol/vectors/revocations.json: every case's rulings, takedowns, statuses and refusals hold
when the records are decoded from the file, and the file is what its generator writes today."""

from __future__ import annotations

import json

import pytest

from commons.core import records as rec
from commons.core.trust.revocation import resolve
from protocol.vectors.vectorfile import command
from tests.conformance.generators import VECTORS_DIR, load_generator

VECTORS = json.loads((VECTORS_DIR / "revocations.json").read_text())
GENERATOR = load_generator("revocations")


def _records(entries: list[dict]) -> list[rec.SignedRecord]:
    network = bytes.fromhex(VECTORS["network"])
    return [rec.verify(bytes.fromhex(e["body"]), bytes.fromhex(e["signature"]), network=network, today=30000,
                       claimed_id=bytes.fromhex(e["id"])) for e in entries]


@pytest.mark.parametrize("case", VECTORS["cases"], ids=lambda c: c["name"])
def test_revocation_vector_holds(case):
    held = _records(case["held"])
    authorities = frozenset(bytes.fromhex(VECTORS["keys"][n]) for n in case["authorities"])
    concluded = GENERATOR.conclude(held, authorities, case["threshold"])
    for field in ("rulings", "dead_ids", "dead_keys", "takedowns", "statuses"):
        assert concluded[field] == case[field], f"case {case['name']}: {field} differs"
    revocations = resolve(held, authorities=authorities, threshold=case["threshold"])
    for arrival, signed in zip(case["arrivals"], _records(case["arrivals"])):
        assert revocations.refuses(signed) == arrival["refusal"], f"case {case['name']}: arrival {arrival['id'][:12]}"


def test_revocation_vectors_are_current():
    assert VECTORS_DIR.joinpath("revocations.json").read_text() == GENERATOR.render(), (
        f"revocations.json is out of date; run: {command(VECTORS_DIR / 'generate_revocations.py')}")
