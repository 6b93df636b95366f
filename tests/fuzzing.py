"""Fuzzing the three decoders that take bytes from peers: record bodies, gossip messages, box-stream.

Inputs are valid seeds (the committed vectors, and a box-stream made here) changed by a few random
mutations — bit flips, msgpack's look-alike bytes (``true`` for ``1``, a float for an int, nil),
insertions, deletions, duplicated and spliced ranges — plus pure random bytes. Each input gets one
of four verdicts from an oracle that knows what the decoder must do:

* ``accepted``: decoded, and what came out is right (a record whose canonical body is the very
  input; a message that re-encodes to itself; box-stream plaintext the sender did send);
* ``refused``: the decoder raised its own error, saying the peer was at fault;
* ``crash``: any other exception (our bug);
* ``invalid-accepted``: decoded, but wrong (a second body for a record, a message that does not
  survive a round trip or carries a bool where an int belongs, forged plaintext).

The suite runs a bounded number of them with hypothesis (tests/test_fuzz_decoders.py); ``make
fuzz`` runs ``python -m tests.fuzzing`` over 10^6 inputs and more, and prints the counts.
"""

from __future__ import annotations

import argparse
import enum
import json
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path

from commons.core import records as rec
from commons.core.records import codec
from commons.core.transport.boxstream import BoxStreamDecoder, BoxStreamEncoder, BoxStreamError
from commons.core.gossip.messages import GossipProtocolError, decode, encode

VECTORS = Path(__file__).resolve().parents[1] / "protocol" / "vectors"
# msgpack bytes that decode to a value Python's equality confuses with another: true, false, nil,
# float32, float64, uint8, positive fixint 1, 0.
LOOKALIKES = (0xC3, 0xC2, 0xC0, 0xCA, 0xCB, 0xCC, 0x01, 0x00)
BOX_KEY, BOX_NONCE = bytes(range(32)), bytes(range(24))


class Verdict(enum.Enum):
    ACCEPTED = "accepted"
    REFUSED = "refused"
    CRASH = "crash"
    INVALID_ACCEPTED = "invalid-accepted"


# --- seeds -------------------------------------------------------------------------------------


def record_seeds() -> list[bytes]:
    cases = json.loads((VECTORS / "records.json").read_text())["tests"]
    return [bytes.fromhex(c["body_hex"]) for c in cases if c["result"] == "valid"]


def message_seeds() -> list[bytes]:
    return [bytes.fromhex(c["message"]) for c in json.loads((VECTORS / "gossip.json").read_text())["messages"]]


PAYLOADS = (b"hello", bytes(4096), b"\x00\x01" * 700)


def box_seed() -> bytes:
    encoder = BoxStreamEncoder(BOX_KEY, BOX_NONCE)
    return b"".join(encoder.encode(p) for p in PAYLOADS) + encoder.goodbye()


# --- mutations ---------------------------------------------------------------------------------


def mutate(data: bytes, rng: random.Random, others: list[bytes], rounds: int | None = None) -> bytes:
    """A few random changes to ``data`` (at least one), of the kinds that find decoder bugs."""
    out = bytearray(data)
    for _ in range(rounds or rng.choice((1, 1, 1, 2, 3))):
        op = rng.randrange(7)
        at = rng.randrange(len(out) + 1)
        if op == 0 and out:  # one bit
            at %= len(out)
            out[at] ^= 1 << rng.randrange(8)
        elif op == 1 and out:  # a look-alike byte
            out[at % len(out)] = rng.choice(LOOKALIKES)
        elif op == 2:  # insert
            out[at:at] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 4)))
        elif op == 3 and out:  # delete a range
            del out[at : at + rng.randrange(1, 9)]
        elif op == 4 and out:  # duplicate a range
            start = rng.randrange(len(out))
            out[at:at] = out[start : start + rng.randrange(1, 17)]
        elif op == 5 and others:  # splice another seed's bytes in
            other = rng.choice(others)
            start = rng.randrange(len(other))
            out[at:at] = other[start : start + rng.randrange(1, 33)]
        else:  # one random byte
            if out:
                out[at % len(out)] = rng.randrange(256)
    return bytes(out)


# --- oracles -----------------------------------------------------------------------------------


def judge_record(body: bytes) -> Verdict:
    try:
        record = rec.decode_body(body)
    except rec.InvalidRecord:
        return Verdict.REFUSED
    except Exception:  # noqa: BLE001 - anything else is a crash, which is what the fuzzer counts
        return Verdict.CRASH
    # Exactly one valid body per record: the canonical encoding of what was accepted is the input.
    if rec.encode_body(record) != body:
        return Verdict.INVALID_ACCEPTED
    # And the decoder's fast path accepted nothing the reference decoder (every field rule run
    # through the record's dataclass) refuses: a bool for a day would survive the round trip above.
    try:
        reference = codec._decode_naming_the_problem(body)
    except rec.InvalidRecord:
        return Verdict.INVALID_ACCEPTED
    return Verdict.ACCEPTED if reference == record else Verdict.INVALID_ACCEPTED


def _well_typed(value: object) -> bool:
    """No bool where the message layout wants an int, at any depth."""
    if isinstance(value, bool):
        return False
    if isinstance(value, tuple):
        return all(map(_well_typed, value))
    return True


def judge_message(data: bytes) -> Verdict:
    try:
        message = decode(data)
    except GossipProtocolError:
        return Verdict.REFUSED
    except Exception:  # noqa: BLE001 - see judge_record
        return Verdict.CRASH
    typed = all(_well_typed(getattr(message, f.name)) for f in fields(message))
    return Verdict.ACCEPTED if typed and decode(encode(message)) == message else Verdict.INVALID_ACCEPTED


def judge_box(wire: bytes) -> Verdict:
    """Feed the whole wire at once; the plaintext must be what the sender sent, in order."""
    decoder = BoxStreamDecoder(BOX_KEY, BOX_NONCE)
    try:
        got = decoder.feed(wire)
    except BoxStreamError:
        return Verdict.REFUSED
    except Exception:  # noqa: BLE001 - see judge_record
        return Verdict.CRASH
    return Verdict.ACCEPTED if tuple(got) == PAYLOADS[: len(got)] else Verdict.INVALID_ACCEPTED


@dataclass(frozen=True)
class Target:
    name: str
    seeds: list[bytes]
    judge: Callable[[bytes], Verdict]


def targets() -> list[Target]:
    return [
        Target("records", record_seeds(), judge_record),
        Target("gossip-messages", message_seeds(), judge_message),
        Target("box-stream", [box_seed()], judge_box),
    ]


def run(target: Target, inputs: int, seed: int) -> dict[str, object]:
    """Judge ``inputs`` inputs (one in 16 pure random bytes, the rest mutated seeds)."""
    rng = random.Random(seed)
    counts: Counter[str] = Counter()
    examples: dict[str, str] = {}
    began = time.perf_counter()
    for _ in range(inputs):
        if rng.randrange(16) == 0:
            data = rng.randbytes(rng.randrange(1, 200))
        else:
            data = mutate(rng.choice(target.seeds), rng, target.seeds)
        verdict = target.judge(data)
        counts[verdict.value] += 1
        if verdict in (Verdict.CRASH, Verdict.INVALID_ACCEPTED):
            examples.setdefault(verdict.value, data.hex())
    return {
        "decoder": target.name,
        "inputs": inputs,
        **{v.value: counts[v.value] for v in Verdict},
        "seconds": round(time.perf_counter() - began, 1),
        "first_bad_input_hex": examples,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=1_000_000, help="inputs per decoder")
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    results = [run(t, args.inputs, args.seed + n) for n, t in enumerate(targets())]
    bad = sum(r["crash"] + r["invalid-accepted"] for r in results)
    if args.json:
        print(json.dumps({"seed": args.seed, "results": results, "bad": bad}, indent=2))
    else:
        for r in results:
            print(f"{r['decoder']:16} {r['inputs']:>9} inputs: {r['accepted']:>7} accepted, {r['refused']:>9} "
                  f"refused, {r['crash']} crashes, {r['invalid-accepted']} invalid accepted ({r['seconds']} s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
