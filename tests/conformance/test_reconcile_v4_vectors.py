"""Every vector in protocol/vectors/reconcile_v4.json holds (the file matches its generator: test_vector_files)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from commons.core.reconcile import estimate as est
from commons.core.reconcile import riblt
from commons.core.reconcile.coded import CodedReconciler
from commons.core.reconcile.keyset import ReconcileProtocolError
from tests.conformance.generators import load_generator

VECTORS = json.loads((Path(__file__).resolve().parents[2] / "protocol" / "vectors" / "reconcile_v4.json").read_text())


@pytest.mark.parametrize("case", VECTORS["hashes"], ids=lambda c: f"hash{c['id']}")
def test_an_items_hash_and_the_symbols_it_maps_to(case):
    item = bytes.fromhex(case["item"])
    assert riblt.hash_item(item, case["salt"]) == case["hash"]
    assert int(riblt.hash_words(riblt.items_to_words(item), case["salt"])[0]) == case["hash"]
    assert riblt.item_indices(case["hash"], case["end"]) == case["indices"]


@pytest.mark.parametrize("case", VECTORS["symbols"], ids=lambda c: f"symbols{c['id']}")
def test_the_first_coded_symbols_of_a_set(case):
    items = b"".join(bytes.fromhex(i) for i in case["items"])
    words = riblt.items_to_words(items)
    symbols = riblt.encode(words, riblt.hash_words(words, case["salt"]), 0, len(case["symbols"]))
    assert [s.hex() for s in riblt.symbol_bytes(symbols)] == case["symbols"]


@pytest.mark.parametrize("case", VECTORS["estimates"], ids=lambda c: f"estimate{c['id']}")
def test_the_estimators_cells_of_a_set(case):
    keys = load_generator("reconcile").build_keyset(case["groups"])
    words = riblt.items_to_words(keys.items_bytes(0, len(keys)))
    cells = est.cells(riblt.hash_words(words, case["salt"]), case["levels"])
    assert est.cells_bytes(cells).hex() == case["cells"]
    assert np.array_equal(est.cells_from_bytes(bytes.fromhex(case["cells"])), cells)


@pytest.mark.parametrize("case", VECTORS["exchanges"], ids=lambda c: f"exchange{c['id']}")
def test_an_exchange_replays_message_by_message(case):
    generator = load_generator("reconcile_v4")
    sides = [generator.make_side(case["sides"][i], generator.build_keyset(case[role]), case["ask_push"][i], case["salts"][i])
             for i, role in enumerate(("initiator", "responder"))]
    messages = [bytes.fromhex(m) for m in case["messages"]]
    assert sides[0].initiate() == messages[0]
    steps: tuple[list[Any], list[Any]] = ([], [])
    pending, reader, at = [messages[0]], 1, 1
    while pending:
        replies: list[bytes] = []
        for message in pending:
            step = sides[reader].reconcile(message)
            steps[reader].append(generator.step_record(step))
            replies += step.replies
        assert replies == messages[at : at + len(replies)], f"the turn after message {at - 1}"
        at += len(replies)
        pending, reader = replies, 1 - reader
    assert at == len(messages)
    assert steps[0] == case["initiator_steps"] and steps[1] == case["responder_steps"]


@pytest.mark.parametrize("case", VECTORS["invalid"], ids=lambda c: f"invalid{c['id']}")
def test_an_invalid_message_is_the_peers_fault(case):
    holder = CodedReconciler(load_generator("reconcile").build_keyset(case["holder"]), salt=1)
    if case["before"]:
        holder.reconcile(bytes.fromhex(case["before"]))
    with pytest.raises(ReconcileProtocolError):
        holder.reconcile(bytes.fromhex(case["message"]))
