"""protocol/vectors/records.json: every vector is judged as it says, by commons and by the spec alone.

Each vector is checked twice. ``verify`` (commons' own receiver) must give the vector's result and
flag. Then the checks an outsider can make from protocol/PROTOCOL.md with nothing but BLAKE3, a raw
Ed25519 verify and a generic msgpack library: the id is BLAKE3-256 of the body, the signed message
is the domain tag followed by that id, the signature verifies exactly when the flag is not
bad-signature, and a valid body is its own shortest-form re-encoding and names the vector's key,
network and a day that is not in the future.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgpack
import nacl.exceptions
import nacl.signing
import pytest
from blake3 import blake3

from commons.core.records.hashing import episode_hash, evidence_hash
from commons.core.records import InvalidRecord, Problem, RecordType, reconcile_key, verify

VECTORS_DIR = Path(__file__).parents[2] / "protocol" / "vectors"
VECTORS = json.loads((VECTORS_DIR / "records.json").read_text(encoding="utf-8"))
NETWORK = bytes.fromhex(VECTORS["network_key_hex"])
TODAY = VECTORS["today"]
FUTURE_TOLERANCE_DAYS = 1  # PROTOCOL.md, "Parameters"


def _h(case: dict[str, Any], name: str) -> bytes:
    return bytes.fromhex(case[f"{name}_hex"])


def _case_id(case: dict[str, Any]) -> str:
    return f"{case['tcId']}-{case['comment']}"


def _raw_signature_verifies(public_key: bytes, message: bytes, signature: bytes) -> bool:
    try:
        nacl.signing.VerifyKey(public_key).verify(message, signature)
    except (nacl.exceptions.BadSignatureError, ValueError, TypeError):
        return False
    return True


@pytest.mark.parametrize("case", VECTORS["tests"], ids=_case_id)
def test_commons_verify_gives_the_vector_result_and_flag(case: dict[str, Any]) -> None:
    try:
        signed = verify(_h(case, "body"), _h(case, "signature"), network=NETWORK, today=TODAY, claimed_id=_h(case, "id"))
    except InvalidRecord as error:
        assert (case["result"], case["flags"]) == ("invalid", [error.problem.value]), str(error)
    else:
        assert (case["result"], case["flags"]) == ("valid", [])
        assert signed.id == _h(case, "id")
        assert signed.type.value == case["type"]
        assert signed.author == _h(case, "public_key")


@pytest.mark.parametrize("case", VECTORS["tests"], ids=_case_id)
def test_vector_id_and_signed_message_follow_the_spec(case: dict[str, Any]) -> None:
    body = _h(case, "body")
    true_id = blake3(body).digest()
    assert (_h(case, "id") == true_id) is (case["flags"] != ["id-mismatch"])
    assert _h(case, "signed_message") == f"commons/v1/{case['type']}\n".encode("ascii") + true_id
    verifies = _raw_signature_verifies(_h(case, "public_key"), _h(case, "signed_message"), _h(case, "signature"))
    assert verifies is (case["flags"] != ["bad-signature"])


@pytest.mark.parametrize("case", [c for c in VECTORS["tests"] if c["result"] == "valid"], ids=_case_id)
def test_valid_vector_is_canonical_with_a_generic_msgpack_library(case: dict[str, Any]) -> None:
    body = _h(case, "body")
    decoded = msgpack.unpackb(body, raw=False)  # a plain dict keeps the wire order of the keys
    assert msgpack.packb(decoded, use_bin_type=True) == body
    assert list(decoded)[:2] == ["type", "v"] and list(decoded)[-1] == "created"
    assert decoded["type"] == case["type"]
    # A record is version 2 exactly when it carries a fix (protocol/PROTOCOL.md, "Versions").
    assert decoded["v"] == (2 if "fix" in decoded else 1) and (decoded["v"] == 1 or decoded["fix"] is not None)
    assert decoded["net"] == NETWORK
    assert decoded["author"] == _h(case, "public_key")
    assert decoded["created"] <= TODAY + FUTURE_TOLERANCE_DAYS


def test_signing_table_holds_the_ascii_domain_tags() -> None:
    assert VECTORS["signing"] == {t.value: f"commons/v1/{t.value}\n".encode("ascii").hex() for t in RecordType}


def test_reconcile_key_is_the_type_tag_then_the_id() -> None:
    assert VECTORS["reconcile_tags"] == {"revocation": 0, "vouch": 1, "lesson": 2, "verification": 3}
    rid = bytes(range(32))
    for type_name, tag in VECTORS["reconcile_tags"].items():
        assert reconcile_key(RecordType(type_name), rid) == bytes([tag]) + rid


@pytest.mark.parametrize("case", VECTORS["keyed_hashes"], ids=lambda c: c["comment"])
def test_keyed_hash_vector_is_blake3_keyed_over_domain_zero_data(case: dict[str, Any]) -> None:
    secret, data = _h(case, "secret"), _h(case, "data")
    assert blake3(case["domain"].encode() + b"\0" + data, key=secret).digest() == _h(case, "hash")
    if case["function"] == "episode":
        assert episode_hash(secret, data.decode()) == _h(case, "hash")
    else:
        assert evidence_hash(secret, data[:32], data[32:].decode()) == _h(case, "hash")


def test_vectors_cover_every_problem_and_every_type() -> None:
    flags = {f for case in VECTORS["tests"] for f in case["flags"]}
    assert flags == {p.value for p in Problem}
    assert {c["type"] for c in VECTORS["tests"] if c["result"] == "valid"} == {t.value for t in RecordType}
    assert [c["tcId"] for c in VECTORS["tests"]] == list(range(1, len(VECTORS["tests"]) + 1))

