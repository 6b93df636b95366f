"""Every vector in protocol/vectors/reconcile.json holds, and the file matches its generator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conformance.generators import load_generator
from commons.core.reconcile.reconciler import KeySet, Reconciler, ReconcileProtocolError, fingerprint
from commons.core.reconcile.keyset import item_key, item_time

VECTORS_DIR = Path(__file__).resolve().parents[2] / "protocol" / "vectors"
VECTORS = json.loads((VECTORS_DIR / "reconcile.json").read_text())


@pytest.mark.parametrize("case", VECTORS["fingerprints"], ids=lambda c: f"fp{c['id']}")
def test_fingerprint_vector(case):
    items = [bytes.fromhex(k) for k in case["items"]]
    assert fingerprint(items).hex() == case["fingerprint"]
    if items:
        keyset = KeySet((item_key(i), item_time(i)) for i in items)
        assert keyset.fingerprint_between(0, len(items)).hex() == case["fingerprint"]


def _step_record(step) -> dict[str, Any]:
    return {
        "have": [k.hex() for k in step.have],
        "need": [k.hex() for k in step.need],
        "withheld": [k.hex() for k in step.withheld],
        "push": [k.hex() for k in step.push],
        "expect": [e.to_json() for e in step.expect],
        "done": step.done,
    }


@pytest.mark.parametrize("case", VECTORS["exchanges"], ids=lambda c: f"exchange{c['id']}")
def test_exchange_vector_replays_message_by_message(case):
    generator = load_generator("reconcile")
    sides = [Reconciler(generator.build_keyset(case[role]), **case["params"]) for role in ("initiator", "responder")]
    messages = [bytes.fromhex(m) for m in case["messages"]]
    assert sides[0].initiate() == messages[0]
    steps: tuple[list[Any], list[Any]] = ([], [])
    for i, message in enumerate(messages):
        reader = (i + 1) % 2  # the responder reads the initiator's messages, and so on
        step = sides[reader].reconcile(message)
        steps[reader].append(_step_record(step))
        expected = messages[i + 1] if i + 1 < len(messages) else None
        assert step.reply == expected, f"reply to message {i}"
    assert steps[0] == case["initiator_steps"]
    assert steps[1] == case["responder_steps"]


@pytest.mark.parametrize("case", VECTORS["invalid"], ids=lambda c: f"invalid{c['id']}")
def test_invalid_message_vector_is_refused(case):
    holder = Reconciler(KeySet((item_key(i), item_time(i)) for i in map(bytes.fromhex, case["holder"])))
    with pytest.raises(ReconcileProtocolError):
        holder.reconcile(bytes.fromhex(case["message"]))
