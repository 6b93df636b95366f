"""Authors and the records they sign, for simulations: keys derived from labels, signed once.

Signing is real (``records.sign``, Ed25519), but a simulation of 10,000 nodes makes its keys from
short labels (``SigningKey(blake3(label))``) and caches them, so that a key costs one derivation
however often it signs.
"""

from __future__ import annotations

import functools

import nacl.signing
from blake3 import blake3

from commons.core import records as rec
from simulations.sim import NOW

NETWORK = b"\x01" * 32  # memnet's default network
TODAY = rec.day_of(NOW)


@functools.lru_cache(maxsize=None)
def signing_key(label: str) -> nacl.signing.SigningKey:
    return nacl.signing.SigningKey(blake3(b"commons/simulations/key\n" + label.encode()).digest())


def author(label: str) -> bytes:
    return bytes(signing_key(label).verify_key)


def lesson(label: str, text: str, *, parents: tuple[bytes, ...] = (), day: int = TODAY) -> rec.SignedRecord:
    return rec.sign(
        rec.Lesson(
            network=NETWORK,
            author=author(label),
            created=day,
            kind=rec.LessonKind.ERROR,
            text=text,
            scope=rec.Scope.SHARED,
            topics=("python", "uv"),
            prediction=rec.Prediction("running uv sync in this repository", text[:200]),
            parents=tuple(sorted(parents)),
        ),
        signing_key(label),
    )


def revocation(label: str, target: rec.SignedRecord, reason: str = "wrong: it was a network outage") -> rec.SignedRecord:
    return rec.sign(
        rec.Revocation(network=NETWORK, author=author(label), created=TODAY, target=target.id,
                       target_kind=rec.TargetKind.RECORD, reason=reason),
        signing_key(label),
    )


def verification(label: str, target: rec.SignedRecord, evidence: bytes) -> rec.SignedRecord:
    return rec.sign(
        rec.Verification(network=NETWORK, author=author(label), created=TODAY, lesson=target.id,
                         outcome=rec.Outcome.CONFIRMED, evidence=evidence, received=TODAY, observed=TODAY,
                         naive=True),
        signing_key(label),
    )


def vouch(label: str, subject: bytes) -> rec.SignedRecord:
    return rec.sign(rec.Vouch(network=NETWORK, author=author(label), created=TODAY, subject=subject),
                    signing_key(label))
