"""Regenerate protocol/vectors/reconcile_v4.json: reconciliation version 4 test vectors.

    .venv/bin/python protocol/vectors/generate_reconcile_v4.py          # rewrite the file
    .venv/bin/python protocol/vectors/generate_reconcile_v4.py --check  # exit 1 if it is out of date

Keys are derived from labels with BLAKE3 as in reconcile.json (its generator builds the sets), and
every salt is fixed, so the output is byte-for-byte stable; tests/conformance/test_reconcile_v4_vectors.py
fails when the file and this script disagree.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from protocol.vectors.vectorfile import command, regenerate  # noqa: E402

from commons.core.reconcile import estimate as est  # noqa: E402
from commons.core.reconcile import riblt  # noqa: E402
from commons.core.reconcile.coded import CodedReconciler  # noqa: E402
from commons.core.reconcile.keyset import KeySet, encode_varint  # noqa: E402
from commons.core.reconcile.negotiate import NegotiatedReconciler  # noqa: E402
from commons.core.reconcile.reconciler import Reconciler, run_in_memory  # noqa: E402
from commons.core.reconcile.wire4 import MAX_SYMBOLS, VERSION, Kind  # noqa: E402

VECTORS_PATH = Path(__file__).with_name("reconcile_v4.json")
COMMAND = command(Path(__file__))
DAY = 20_000

COMMENT = (
    "Reconciliation version 4 vectors for commons (spec: protocol/reconcile.md, Version 4). Items are "
    "37 bytes, created day (uint32 big-endian) then the 33-byte key, as in reconcile.json, whose groups "
    "{tag, label, count, day, days, withheld} build the sets here the same way. hashes: an item's salted "
    "64-bit hash (h = salt; h = mix64(h XOR w) over its five little-endian words, the item zero-padded to "
    "40 bytes) and the symbols below 'end' it maps to. symbols: the first coded symbols of a set, each as "
    "sent (37-byte sum, 8-byte little-endian checksum, count modulo 256 in one byte). estimates: the estimator's "
    "cells (one byte each, level-major, 16 groups a level) of a set for a salt. exchanges: both sides build "
    "their sets, use the salts and flags given (version 4 from the start, or negotiated: 'negotiate' sides "
    "start in version 3 with the offer, a 'v3' side is a version 3 node), and the messages are in wire "
    "order with, per side, what each call to reconcile() reported. invalid: messages that a version 4 "
    "responder holding 'holder' (after reading 'before', if given) must refuse as the peer's fault. "
    "Regenerate with: " + COMMAND
)


def _generator():
    import importlib.util

    path = Path(__file__).with_name("generate_reconcile.py")
    spec = importlib.util.spec_from_file_location("generate_reconcile", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


V3 = _generator()
build_keyset = V3.build_keyset
_group = V3._group


def _items(groups: list[dict[str, Any]]) -> list[bytes]:
    keys = build_keyset(groups)
    return keys.items_between(0, len(keys))


def hash_vectors() -> list[dict[str, Any]]:
    items = _items([_group(2, "hash", 3), _group(0, "hash-r", 1, day=0)]) + [bytes(37), b"\xff" * 37]
    out = []
    for i, (item, salt) in enumerate(zip(items, [0, 1, 0xDEADBEEF, 2**64 - 1, 42, 7]), 1):
        h = riblt.hash_item(item, salt)
        out.append({"id": i, "item": item.hex(), "salt": salt, "hash": h, "end": 64,
                    "indices": riblt.item_indices(h, 64)})
    return out


def symbol_vectors() -> list[dict[str, Any]]:
    cases = [
        ("one lesson", [_group(2, "sym", 1)], 3, 4),
        ("ten lessons over three days", [_group(2, "sym10", 10, days=3)], 99, 12),
        ("the same ten and a revocation", [_group(2, "sym10", 10, days=3), _group(0, "sym-r", 1)], 99, 12),
    ]
    out = []
    for i, (comment, groups, salt, count) in enumerate(cases, 1):
        items = _items(groups)
        words = riblt.items_to_words(b"".join(items))
        symbols = riblt.encode(words, riblt.hash_words(words, salt), 0, count)
        out.append({"id": i, "comment": comment, "items": [x.hex() for x in items], "salt": salt,
                    "symbols": [s.hex() for s in riblt.symbol_bytes(symbols)]})
    return out


def estimate_vectors() -> list[dict[str, Any]]:
    out = []
    for i, (groups, salt) in enumerate([([_group(2, "est", 40, days=5)], 5), ([_group(1, "est-v", 300)], 6)], 1):
        items = _items(groups)
        words = riblt.items_to_words(b"".join(items))
        levels = est.levels_for(len(items))
        cells = est.cells(riblt.hash_words(words, salt), levels)
        out.append({"id": i, "groups": groups, "salt": salt, "levels": levels, "cells": est.cells_bytes(cells).hex()})
    return out


EXCHANGES: list[dict[str, Any]] = [
    {"id": 1, "comment": "two empty sets: the opening, answered by a final plan (equal)",
     "initiator": [], "responder": [], "sides": ["v4", "v4"]},
    {"id": 2, "comment": "identical sets: the plan says equal, one round trip",
     "initiator": [_group(2, "same", 50, days=4)], "responder": [_group(2, "same", 50, days=4)], "sides": ["v4", "v4"]},
    {"id": 3, "comment": "the initiator lacks the 12 newest: the responder pushes its tail, one round trip",
     "initiator": [_group(2, "history", 200, days=20)],
     "responder": [_group(2, "history", 200, days=20), _group(2, "today", 12, day=DAY + 20)], "sides": ["v4", "v4"]},
    {"id": 4, "comment": "differences both ways among 300 shared: coded symbols, decoded, pushed both ways",
     "initiator": [_group(2, "common", 300, days=30), _group(2, "only-i", 6, days=30)],
     "responder": [_group(2, "common", 300, days=30), _group(3, "only-r", 4, days=30)], "sides": ["v4", "v4"]},
    {"id": 5, "comment": "exchange 4, neither side asking to be pushed: the lists name every difference",
     "initiator": [_group(2, "common", 300, days=30), _group(2, "only-i", 6, days=30)],
     "responder": [_group(2, "common", 300, days=30), _group(3, "only-r", 4, days=30)], "sides": ["v4", "v4"],
     "ask_push": [False, False]},
    {"id": 6, "comment": "withheld keys on both sides: listed as withheld, never pushed",
     "initiator": [_group(2, "common", 100, days=10), _group(2, "refused-i", 2, withheld=True), _group(2, "mine", 1)],
     "responder": [_group(2, "common", 100, days=10), _group(2, "refused-r", 3, withheld=True)], "sides": ["v4", "v4"]},
    {"id": 7, "comment": "8 items against 2000 others: the first batch falls short, the estimate sees no end: range reconciliation follows",
     "initiator": [_group(2, "few", 8)], "responder": [_group(2, "many", 2000, days=50)], "sides": ["v4", "v4"]},
    {"id": 8, "comment": "two negotiating nodes: a version 3 message with the offer, answered by the opening",
     "initiator": [_group(2, "common", 100, days=10), _group(2, "only-i", 3)],
     "responder": [_group(2, "common", 100, days=10), _group(3, "only-r", 2)], "sides": ["negotiate", "negotiate"]},
    {"id": 9, "comment": "a negotiating node and a version 3 node: the offer is passed over, version 3 throughout",
     "initiator": [_group(2, "common", 100, days=10), _group(2, "only-i", 3)],
     "responder": [_group(2, "common", 100, days=10), _group(3, "only-r", 2)], "sides": ["negotiate", "v3"]},
    {"id": 10, "comment": "one item differs: symbol 0 of the opening decodes, the responder names and pushes",
     "initiator": [_group(2, "common", 200, days=20), _group(2, "only-i", 1, days=20)],
     "responder": [_group(2, "common", 200, days=20)], "sides": ["v4", "v4"]},
    {"id": 11, "comment": "the responder lacks the 12 newest: it codes up to its highest, the initiator pushes the rest",
     "initiator": [_group(2, "history", 200, days=20), _group(2, "today", 12, day=DAY + 20)],
     "responder": [_group(2, "history", 200, days=20)], "sides": ["v4", "v4"]},
    {"id": 12, "comment": "60 differences: the first batch falls short, the estimator's cells size the next",
     "initiator": [_group(2, "common", 300, days=30), _group(2, "only-i", 30, days=30)],
     "responder": [_group(2, "common", 300, days=30), _group(3, "only-r", 30, days=30)], "sides": ["v4", "v4"]},
    {"id": 13, "comment": "both sides made 30 since they met: below the newest day where they agree, the responder lists the rest",
     "initiator": [_group(2, "common", 300, days=30), _group(2, "since-i", 30, day=DAY + 31)],
     "responder": [_group(2, "common", 300, days=30), _group(2, "since-r", 30, day=DAY + 31)], "sides": ["v4", "v4"]},
]

SALTS = (11, 22)


def make_side(kind: str, keys: KeySet, ask_push: bool, salt: int):
    if kind == "v3":
        return Reconciler(keys, frame_size_limit=65000, ask_push=ask_push)
    if kind == "negotiate":
        return NegotiatedReconciler(keys, frame_size_limit=65000, ask_push=ask_push, salt=salt)
    return CodedReconciler(keys, frame_size_limit=65000, ask_push=ask_push, salt=salt)


def step_record(step) -> dict[str, Any]:
    return {"have": [k.hex() for k in step.have], "need": [k.hex() for k in step.need],
            "withheld": [k.hex() for k in step.withheld], "push": [k.hex() for k in step.push],
            "expect": [e.to_json() for e in step.expect], "done": step.done}


def exchange_vector(case: dict[str, Any]) -> dict[str, Any]:
    ask = case.get("ask_push", [True, True])
    sides = [make_side(case["sides"][i], build_keyset(case[role]), ask[i], SALTS[i])
             for i, role in enumerate(("initiator", "responder"))]
    exchange = run_in_memory(*sides)
    return {**case, "ask_push": ask, "salts": list(SALTS), "messages": [m.hex() for m in exchange.messages],
            "round_trips": exchange.round_trips,
            "initiator_steps": [step_record(s) for s in exchange.initiator_steps],
            "responder_steps": [step_record(s) for s in exchange.responder_steps]}


def invalid_vectors() -> list[dict[str, Any]]:
    holder = [_group(2, "holder", 20)]
    v = bytes([VERSION, 0])
    estimate = CodedReconciler(build_keyset([_group(2, "holder", 18), _group(2, "other", 2)]), salt=3).initiate()
    cases: list[tuple[str, bytes, bytes | None]] = [
        ("empty message", b"", None),
        ("a message of version 3 in a version 4 session", bytes([3]), None),
        ("no flags", bytes([VERSION]), None),
        ("unknown flag", bytes([VERSION, 2]), None),
        ("a continued message that carries nothing", bytes([VERSION, 1]), None),
        ("unknown section kind 11", v + bytes([11]), None),
        ("a plan before any estimate", v + bytes([Kind.PLAN, 0, 0, 0, 0]), None),
        ("an estimate truncated after its flags", v + bytes([Kind.ESTIMATE, 0]), None),
        ("an estimate whose highest item is 5 bytes", v + bytes([Kind.ESTIMATE, 0]) + bytes(8) + bytes([5]) + bytes(5), None),
        ("an estimate whose symbol 0 counts other than its count",
         v + bytes([Kind.ESTIMATE, 0]) + bytes(8) + bytes([37]) + bytes(37) + bytes([3]) + bytes(45) + bytes([2]), None),
        ("an estimate's flags with an unknown bit", v + bytes([Kind.ESTIMATE, 2]) + bytes(8) + bytes([0, 0]) + bytes(46), None),
        ("varint not in its shortest form", v + bytes([Kind.ESTIMATE, 0x80, 0x00]), None),
        ("two estimates' worth: a second section after the estimate", estimate + bytes([Kind.MORE, 1]), None),
        ("more symbols asked than the limit", v + bytes([Kind.MORE]) + encode_varint(MAX_SYMBOLS + 1), estimate),
        ("more symbols asked than were already sent", v + bytes([Kind.MORE, 1]), estimate),
        ("a batch to size from an estimate of 41 levels", v + bytes([Kind.MORE, 0, 41]) + bytes(41 * est.GROUPS), estimate),
        ("a pushed day with a count of 0 (decoded turn)",
         v + bytes([Kind.DECODED]) + encode_varint(1) + encode_varint(DAY) + encode_varint(0), estimate),
        ("lacking an item the holder does not hold (a hash none of its items has)",
         v + bytes([Kind.DECODED, 0, Kind.LACKING]) + encode_varint(1) + bytes(8), estimate),
        ("listed items not ascending",
         v + bytes([Kind.DECODED, 0, Kind.LISTED, 2]) + encode_varint(DAY) + bytes([2]) + b"\x09" * 32 + b"\x00"
         + bytes([2]) + b"\x01" * 32 + b"\x00", estimate),
    ]
    return [{"id": i, "comment": c, "holder": holder, "before": None if b is None else b.hex(), "message": m.hex(),
             "result": "invalid"} for i, (c, m, b) in enumerate(cases, 1)]


def build() -> dict[str, Any]:
    return {
        "_comment": COMMENT,
        "protocol_version": VERSION,
        "hashes": hash_vectors(),
        "symbols": symbol_vectors(),
        "estimates": estimate_vectors(),
        "exchanges": [exchange_vector(c) for c in EXCHANGES],
        "invalid": invalid_vectors(),
    }


def render() -> str:
    return json.dumps(build(), indent=1) + "\n"


def main(argv: list[str] | None = None) -> int:
    return regenerate(argv, generator=Path(__file__), path=VECTORS_PATH, render=render)


if __name__ == "__main__":
    raise SystemExit(main())
