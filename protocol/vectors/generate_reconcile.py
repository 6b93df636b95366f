"""Regenerate protocol/vectors/reconcile.json: range-based set reconciliation test vectors.

    .venv/bin/python protocol/vectors/generate_reconcile.py          # rewrite the file
    .venv/bin/python protocol/vectors/generate_reconcile.py --check  # exit 1 if it is out of date

Every key is derived from a label with BLAKE3, so the output is byte-for-byte stable;
tests/conformance/test_reconcile_vectors.py fails when the file and this script disagree.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import blake3

# Run as a plain script from a checkout: make the repository's `commons` importable without install.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from protocol.vectors.vectorfile import command, regenerate  # noqa: E402

from commons.core.reconcile.reconciler import (  # noqa: E402
    PROTOCOL_VERSION,
    KeySet,
    Reconciler,
    encode_varint,
    fingerprint,
    make_item,
    run_in_memory,
)

VECTORS_PATH = Path(__file__).with_name("reconcile.json")
DAY = 20_000  # 2024-10-04, days since 1970-01-01: the created day of the vectors' records
COMMAND = command(Path(__file__))

COMMENT = (
    "Range-based set reconciliation vectors for commons (spec: protocol/reconcile.md). A key is "
    "33 bytes: a tag byte (0 revocation, 1 vouch, 2 lesson, 3 verification) then a 32-byte id; it "
    "is reconciled as a 37-byte item, its record's created day (uint32 big-endian) then the key (in "
    "IdList and Diff ranges an item is listed as varint(day - previous day) then the key). "
    "Key j of a group {tag, label, count, day, days} is bytes([tag]) + BLAKE3(utf8(label + '/' + "
    "str(j))) for j in 0..count-1, at day + (j mod days) (days defaults to 1); groups with "
    "withheld=true are keys held but not sent. fingerprints: items (hex) -> fingerprint (hex). "
    "exchanges: both sides build their sets from their groups and use params; "
    "messages are in wire order, the first from the initiator, then alternating; steps list, per "
    "side and in order, what each call to reconcile() reported (have / need / withheld, hex), "
    "the keys whose records it must then push, the pushes it must expect (ranges, hex bounds, null for "
    "+infinity, with a count) and whether the session was then over. invalid: messages a receiver "
    "holding the items 'holder' (hex) "
    "must refuse as the peer's fault. Regenerate with: " + COMMAND
)


def group_keys(group: dict[str, Any]) -> list[bytes]:
    return [
        bytes([group["tag"]]) + blake3.blake3(f"{group['label']}/{j}".encode()).digest()
        for j in range(group["count"])
    ]


def group_entries(group: dict[str, Any]) -> list[tuple[bytes, int]]:
    days = group.get("days", 1)
    return [(key, group["day"] + j % days) for j, key in enumerate(group_keys(group))]


def build_keyset(groups: list[dict[str, Any]]) -> KeySet:
    ks = KeySet()
    for group in groups:
        ks.update(group_entries(group), withheld=group.get("withheld", False))
    return ks


def _group(tag: int, label: str, count: int, withheld: bool = False, day: int = DAY, days: int = 1) -> dict[str, Any]:
    out: dict[str, Any] = {"tag": tag, "label": label, "count": count, "day": day}
    if days != 1:
        out["days"] = days
    if withheld:
        out["withheld"] = True
    return out


EXCHANGES: list[dict[str, Any]] = [
    {"id": 1, "comment": "two empty sets: an empty IdList, answered by a final empty message",
     "initiator": [], "responder": [], "params": {}},
    {"id": 2, "comment": "identical small sets: one IdList, answered by a final empty message",
     "initiator": [_group(2, "same", 5)], "responder": [_group(2, "same", 5)], "params": {}},
    {"id": 3, "comment": "small sets differing both ways, under the IdList threshold after one split",
     "initiator": [_group(2, "common", 20), _group(2, "only-initiator", 3)],
     "responder": [_group(2, "common", 20), _group(3, "only-responder", 2)], "params": {}},
    {"id": 4, "comment": "one side empty, 300 keys, minimum frame: one Diff announces 300 pushed records",
     "initiator": [], "responder": [_group(1, "vouches", 300)], "params": {"frame_size_limit": 2048}},
    {"id": 9, "comment": "one side empty, 300 withheld keys, minimum frame: Diffs listing them are cut at the "
     "frame limit",
     "initiator": [], "responder": [_group(1, "refused", 300, withheld=True)], "params": {"frame_size_limit": 2048}},
    {"id": 5, "comment": "1000 common keys on one day; a revocation and a lesson differ: within a day "
     "the revocation (tag 0) is delivered first",
     "initiator": [_group(2, "big", 600), _group(3, "big-v", 400), _group(2, "stale", 1)],
     "responder": [_group(2, "big", 600), _group(3, "big-v", 400), _group(0, "revoke", 1)], "params": {}},
    {"id": 6, "comment": "withheld keys: the peer reports them as withheld, never as need",
     "initiator": [_group(2, "common", 30), _group(2, "refused", 2, withheld=True), _group(2, "mine", 1)],
     "responder": [_group(2, "common", 30)], "params": {"branching": 4, "id_list_threshold": 4}},
    {"id": 7, "comment": "2000 common keys over 100 days; the initiator lacks the 12 made on a newer "
     "day: one fingerprint path to the newest range, then its items",
     "initiator": [_group(2, "history", 2000, days=100)],
     "responder": [_group(2, "history", 2000, days=100), _group(2, "today", 12, day=DAY + 100)], "params": {}},
    {"id": 8, "comment": "the same key at two days is two different items: both sides see a difference",
     "initiator": [_group(2, "moved", 1)], "responder": [_group(2, "moved", 1, day=DAY + 1)], "params": {}},
    {"id": 10, "comment": "exchange 3 with neither side asking to be pushed: IdLists, and Diffs naming "
     "the items the list lacks",
     "initiator": [_group(2, "common", 20), _group(2, "only-initiator", 3)],
     "responder": [_group(2, "common", 20), _group(3, "only-responder", 2)], "params": {"ask_push": False}},
    {"id": 11, "comment": "one side empty, 300 keys, minimum frame, no pushes asked: Diffs naming them "
     "are cut at the frame limit",
     "initiator": [], "responder": [_group(1, "vouches", 300)], "params": {"frame_size_limit": 2048, "ask_push": False}},
]


def _hexes(keys: list[bytes]) -> list[str]:
    return [k.hex() for k in keys]


def exchange_vector(case: dict[str, Any]) -> dict[str, Any]:
    params = case["params"]
    exchange = run_in_memory(
        Reconciler(build_keyset(case["initiator"]), **params),
        Reconciler(build_keyset(case["responder"]), **params),
    )

    def steps(side: list[Any]) -> list[dict[str, Any]]:
        return [
            {"have": _hexes(s.have), "need": _hexes(s.need), "withheld": _hexes(s.withheld), "push": _hexes(s.push),
             "expect": [e.to_json() for e in s.expect], "done": s.done}
            for s in side
        ]

    return {
        **case,
        "messages": [m.hex() for m in exchange.messages],
        "initiator_steps": steps(exchange.initiator_steps),
        "responder_steps": steps(exchange.responder_steps),
    }


def fingerprint_vectors() -> list[dict[str, Any]]:
    lessons = [make_item(day, key) for key, day in group_entries(_group(2, "fp", 5, days=3))]
    rid = bytes(range(32))
    cases = [
        ("empty set", []),
        ("one item, all zero", [bytes(37)]),
        ("one lesson", lessons[:1]),
        ("five lessons over three days", lessons),
        ("sum wraps modulo 2**296 to zero", [b"\xff" * 37, b"\x00" * 36 + b"\x01"]),
        ("same id as a revocation", [make_item(DAY, b"\x00" + rid)]),
        ("same id as a lesson: the tag counts", [make_item(DAY, b"\x02" + rid)]),
        ("same lesson a day later: the day counts", [make_item(DAY + 1, b"\x02" + rid)]),
    ]
    return [
        {"id": i, "comment": comment, "items": _hexes(sorted(keys)), "fingerprint": fingerprint(keys).hex()}
        for i, (comment, keys) in enumerate(cases, 1)
    ]


def invalid_vectors() -> list[dict[str, Any]]:
    v = bytes([PROTOCOL_VERSION])
    key = make_item(DAY, b"\x02" + bytes(32)).hex()
    listed = (encode_varint(DAY) + b"\x02" + bytes(32)).hex()  # that item in a list from the empty bound
    cases = [
        ("empty message", ""),
        ("protocol version 1 (ordered by key alone)", "01"),
        ("protocol version 2 (items listed with whole days)", "02"),
        ("unknown protocol version 4", "04"),
        ("truncated fingerprint", v.hex() + "0001" + "00" * 8),
        ("unknown mode 9", v.hex() + "0009"),
        ("bounds not increasing", v.hex() + "0102020500" + "01010200"),
        ("bound sharing more bytes than its lower bound has", v.hex() + "02010500"),
        ("range after the infinite bound", v.hex() + "0000" + "0000"),
        ("bound longer than 37 bytes", v.hex() + "0126" + "00" * 38 + "00"),
        ("varint not in shortest form", v.hex() + "008100"),
        ("IdList truncated", v.hex() + "000202" + listed),
        ("IdList keys not strictly ascending", v.hex() + "000202" + listed + "00" + listed[6:] + "00"),
        ("IdList item above its range", v.hex() + "010200000201" + listed + "00"),
        ("IdList item day beyond 2**32 - 1", v.hex() + "000201" + encode_varint(1 << 32).hex() + "02" + "00" * 32 + "00"),
        ("withheld position out of range", v.hex() + "000201" + listed + "0101"),
        ("IdList of 65 keys", v.hex() + "000241"),
        ("PushList of 65 keys", v.hex() + "000441"),
        ("Diff answering no IdList", v.hex() + "000300000000"),
        ("Diff truncated after its push count", v.hex() + "000380"),
    ]
    return [{"id": i, "comment": c, "holder": [key], "message": m, "result": "invalid"} for i, (c, m) in enumerate(cases, 1)]


def build() -> dict[str, Any]:
    return {
        "_comment": COMMENT,
        "protocol_version": PROTOCOL_VERSION,
        "fingerprints": fingerprint_vectors(),
        "exchanges": [exchange_vector(c) for c in EXCHANGES],
        "invalid": invalid_vectors(),
    }


def render() -> str:
    return json.dumps(build(), indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    return regenerate(argv, generator=Path(__file__), path=VECTORS_PATH, render=render)


if __name__ == "__main__":
    raise SystemExit(main())
