"""Regenerate protocol/vectors/gossip.json: gossip message and frame test vectors.

    .venv/bin/python protocol/vectors/generate_gossip.py          # rewrite the file
    .venv/bin/python protocol/vectors/generate_gossip.py --check  # exit 1 if it is out of date

Every input is fixed or derived from a label with BLAKE3 (Ed25519 signatures are deterministic),
so the output is byte-for-byte stable; tests/conformance/test_gossip_vectors.py fails when the
file and this script disagree.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import blake3
import msgpack
import nacl.signing

# Run as a plain script from a checkout: make the repository's `commons` importable without install.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from protocol.vectors.vectorfile import command, regenerate  # noqa: E402

from commons.core import records as rec  # noqa: E402
from commons.core.gossip.node import network_hash  # noqa: E402
from commons.core.gossip.messages import (  # noqa: E402
    Announce,
    Bye,
    Hello,
    Message,
    Peers,
    Reconcile,
    ReconcilePhase,
    Records,
    Want,
    encode,
    encode_frame,
)

VECTORS_PATH = Path(__file__).with_name("gossip.json")
COMMAND = command(Path(__file__))

COMMENT = (
    "Gossip message vectors for commons (spec: protocol/gossip.md). Each message is a msgpack array "
    "[type code, fields...]; 'message' is its hex encoding and 'frame' the same prefixed by its "
    "4-byte big-endian length, as sent on the box-stream. Byte strings in 'fields' are hex. A key "
    "labelled L is bytes([tag]) + BLAKE3(utf8(L)). The record in the Records vector is a lesson "
    "signed by the Ed25519 seed 0x07 * 32 on network 0x01 * 32 (see records.json for its layout). "
    "network_hash: BLAKE3('commons/gossip/v1/network\\n' || network). invalid: messages a receiver "
    "must refuse as the peer's fault, with the problem it reports and what its session does: 'close' "
    "(at once, as misbehaving: a type code this version does not have) or 'penalise' (penalty_malformed; "
    "the second such message closes the session). Regenerate with: " + COMMAND
)

NETWORK = b"\x01" * 32


def key(tag: int, label: str) -> bytes:
    return bytes([tag]) + blake3.blake3(label.encode()).digest()


def sample_record() -> rec.SignedRecord:
    signer = nacl.signing.SigningKey(b"\x07" * 32)
    return rec.sign(
        rec.Lesson(
            network=NETWORK,
            author=bytes(signer.verify_key),
            created=20000,
            kind=rec.LessonKind.ERROR,
            text="pip install fails on Python 3.13 when no wheel is published.",
            scope=rec.Scope.SHARED,
            topics=("pip", "python"),
            prediction=rec.Prediction("running pip install", "a build error"),
        ),
        signer,
    )


def messages() -> list[tuple[str, Message]]:
    record = sample_record()
    return [
        ("Hello from a node that listens", Hello(1, network_hash(NETWORK), "tcp:192.0.2.7:8008")),
        ("Hello from a node that only dials", Hello(1, network_hash(NETWORK), None)),
        ("Announce: a revocation sorts before a lesson", Announce((key(0, "revocation/0"), key(2, "lesson/0")))),
        ("Announce with no keys (allowed, useless)", Announce(())),
        ("Want two keys", Want((key(2, "lesson/0"), key(3, "verification/0")))),
        ("Records: one record, one wanted key missing", Records(((record.body, record.signature),), (key(2, "lesson/9"),))),
        ("Records: nothing found", Records((), (key(2, "lesson/0"),))),
        ("Reconcile: the initiator's first message (identical empty sets)", Reconcile(ReconcilePhase.START, b"\x01")),
        ("Reconcile: the responder's final answer", Reconcile(ReconcilePhase.RESPONDER, b"\x01")),
        ("Peers: two entries", Peers((("tcp:192.0.2.8:8008", b"\x11" * 32), ("tcp:[2001:db8::1]:8008", b"\x22" * 32)))),
        ("Bye after misbehaviour", Bye("misbehaved: invalid record: the signature does not verify")),
    ]


def plain(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    return value


def describe(message: Message) -> dict[str, Any]:
    return {"type": type(message).__name__, "fields": {k: plain(v) for k, v in vars(message).items()}}


def invalid() -> list[tuple[str, bytes, str]]:
    good_key = key(2, "lesson/0")
    return [
        ("not msgpack", b"\xc1", "malformed"),
        ("a map, not an array", msgpack.packb({"type": 1}), "malformed"),
        ("an empty array", msgpack.packb([]), "malformed"),
        ("unknown type code 7", msgpack.packb([7, []]), "unknown-type"),
        ("Hello with a 31-byte network hash", msgpack.packb([0, 1, bytes(31), None]), "bad-field"),
        ("Hello missing its listen field", msgpack.packb([0, 1, bytes(32)]), "bad-field"),
        ("Announce key of 32 bytes", msgpack.packb([1, [good_key[:32]]]), "bad-field"),
        ("Announce key as a string", msgpack.packb([1, ["ab" * 33]]), "bad-field"),
        ("Announce of 513 keys (over the 512-element array limit)", msgpack.packb([1, [good_key] * 513]), "malformed"),
        ("Want of 257 keys", msgpack.packb([2, [good_key] * 257]), "bad-field"),
        ("Records entry with three elements", msgpack.packb([3, [[b"x", b"y", b"z"]], []]), "bad-field"),
        ("Records body over 4096 bytes", msgpack.packb([3, [[bytes(4097), bytes(64)]], []]), "bad-field"),
        ("Reconcile phase 3", msgpack.packb([4, 3, b"\x01"]), "bad-field"),
        ("Peers transport key of 31 bytes", msgpack.packb([5, [["tcp:x:1", bytes(31)]]]), "bad-field"),
        ("Peers of 33 entries", msgpack.packb([5, [["a", bytes(32)]] * 33]), "bad-field"),
        ("Bye reason not a string", msgpack.packb([6, b"bin"]), "bad-field"),
        ("Bye with an extra field", msgpack.packb([6, "x", 1]), "bad-field"),
    ]


def unknown_types() -> list[tuple[str, bytes, str]]:
    """Type codes version 1 does not have, at the edges of msgpack's integer forms (after the
    others, so that the ids of earlier cases stay as they were)."""
    return [
        ("unknown type code 127 (the last positive fixint)", msgpack.packb([127, []]), "unknown-type"),
        ("unknown type code 128 (a uint8, past the fixints)", msgpack.packb([128, []]), "unknown-type"),
        ("unknown type code -1 (a negative fixint)", msgpack.packb([-1, []]), "unknown-type"),
        ("unknown type code 2^32 (a uint64)", msgpack.packb([2**32, []]), "unknown-type"),
        ("unknown type code 7 with no fields", msgpack.packb([7]), "unknown-type"),
    ]


# What a session does on each problem (protocol/gossip.md, Score): a type code the version lacks is
# another protocol spoken under our Hello, so the session closes; the rest cost a penalty.
SESSION_ACTION = {"unknown-type": "close", "malformed": "penalise", "bad-field": "penalise"}


def type_confusion() -> list[tuple[str, bytes, str]]:
    """Every field of every message given true (and every integer also 1.0), which Python's
    ``True == 1 == 1.0`` would let pass an equality check: each is refused by type."""
    k, body, sig = key(2, "lesson/0"), b"\x80", bytes(64)
    fields: list[tuple[str, list[Any]]] = [
        ("Hello", [0, 1, bytes(32), None]),
        ("Announce", [1, [k]]),
        ("Want", [2, [k]]),
        ("Records", [3, [[body, sig]], [k]]),
        ("Reconcile", [4, 0, b"\x01"]),
        ("Peers", [5, [["tcp:x:1", bytes(32)]]]),
        ("Bye", [6, "done"]),
    ]
    out = [("type code as true (== 1, Announce)", msgpack.packb([True, [k]]), "malformed"),
           ("type code as 1.0", msgpack.packb([1.0, [k]]), "malformed")]
    for name, items in fields:
        for i in range(1, len(items)):
            for path, wrong in _confusions(items[i]):
                changed = list(items)
                changed[i] = wrong
                out.append((f"{name} field {i}{path} as {_label(wrong)}", msgpack.packb(changed), "bad-field"))
    return out


def _confusions(value: Any) -> list[tuple[str, Any]]:
    """(where, replacement) for ``value`` and, inside lists, for each element, one level down."""
    swaps: list[tuple[str, Any]] = [("", True)]
    if type(value) is int:
        swaps += [("", False), ("", float(value))]  # with true: the booleans, and the float equal to it
    if type(value) is list and value:
        if type(value[0]) is list:
            swaps.append(("[0]", [True]))
        for j, inner in enumerate(value[0] if type(value[0]) is list else [value[0]]):
            nested = type(value[0]) is list
            for path, wrong in _confusions(inner):
                element = [*value[0][:j], wrong, *value[0][j + 1 :]] if nested else wrong
                swaps.append((f"[0]{f'[{j}]' if nested else ''}{path}", [element]))
    return swaps


def _label(value: Any) -> str:
    while type(value) is list:
        value = value[0] if type(value[0]) is not list else next(v for v in value[0] if type(v) in (bool, float))
    return {True: "true", False: "false"}[value] if type(value) is bool else repr(value)


def vectors() -> dict[str, Any]:
    return {
        "_comment": COMMENT,
        "network_hash": {"network": NETWORK.hex(), "hash": network_hash(NETWORK).hex()},
        "messages": [
            {
                "id": i,
                "comment": comment,
                **describe(message),
                "message": encode(message).hex(),
                "frame": encode_frame(encode(message)).hex(),
            }
            for i, (comment, message) in enumerate(messages())
        ],
        "invalid": [
            {"id": i, "comment": comment, "message": raw.hex(), "result": "invalid", "problem": problem,
             "session": SESSION_ACTION[problem]}
            for i, (comment, raw, problem) in enumerate(invalid() + type_confusion() + unknown_types())
        ],
    }


def render() -> str:
    return json.dumps(vectors(), indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    return regenerate(argv, generator=Path(__file__), path=VECTORS_PATH, render=render)


if __name__ == "__main__":
    sys.exit(main())
