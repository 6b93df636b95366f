"""Regenerate protocol/vectors/revocations.json: revocation, cascade and death-certificate vectors.

    .venv/bin/python protocol/vectors/generate_revocations.py          # rewrite the file
    .venv/bin/python protocol/vectors/generate_revocations.py --check  # exit 1 if it is out of date

Every key is an Ed25519 seed derived from a label with BLAKE3 and Ed25519 signatures are
deterministic, so the output is byte-for-byte stable; tests/conformance/test_revocation_vectors.py
fails, naming this command, when the file and the code disagree.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import blake3
import nacl.signing

# Run as a plain script from a checkout: make the repository's `commons` importable without install.
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from protocol.vectors.vectorfile import command, regenerate  # noqa: E402

from commons.core.records import (  # noqa: E402
    Lesson, LessonKind, Prediction, Revocation, Scope, SignedRecord, TargetKind, Vouch, sign,
)
from commons.core.trust.revocation import resolve  # noqa: E402
from commons.core.trust.evaluation import Policy, TrustPolicy, evaluate  # noqa: E402

VECTORS_PATH = Path(__file__).with_name("revocations.json")
COMMAND = command(Path(__file__))
NETWORK = bytes(32)
DAY = 20759  # 2026-11-02

COMMENT = (
    "Revocation vectors for commons (spec: protocol/PROTOCOL.md, 'Revocation and vouch semantics'). "
    "Keys: the Ed25519 signing key of a name is the seed BLAKE3(utf8('commons/vectors/key/' + name)); "
    "'keys' maps each name to its public key (hex). Each case lists the records a node holds "
    "('held': body and signature hex, with its id), the node's settings ('authorities': names, "
    "'threshold'), and what a conforming node concludes: 'rulings' (revocation id -> ruling), "
    "'dead_ids' and 'dead_keys' (sorted hex), 'takedowns' (dead id -> cause, the applied revocation ids, "
    "and the provenance chain from the dead ancestor down to the parent), 'statuses' (lesson id -> "
    "status, for a node whose [trust] authors are every lesson author, so that a live lesson is "
    "'common', a replaced one 'superseded' and a dead one 'revoked'), and 'arrivals': records that "
    "arrive afterwards with the refusal reason intake gives (null: accepted). Regenerate with: " + COMMAND
)

NAMES = ("alice", "bob", "carol", "mallory", "auth1", "auth2", "observer")


def signing_key(name: str) -> nacl.signing.SigningKey:
    return nacl.signing.SigningKey(blake3.blake3(f"commons/vectors/key/{name}".encode()).digest())


def pub(name: str) -> bytes:
    return bytes(signing_key(name).verify_key)


def lesson(author: str, text: str, *, parents: tuple[SignedRecord, ...] = (), supersedes: SignedRecord | None = None,
           day: int = DAY) -> SignedRecord:
    return sign(Lesson(network=NETWORK, author=pub(author), created=day, kind=LessonKind.ERROR, text=text,
                       scope=Scope.SHARED, topics=("pip",),
                       prediction=Prediction("pip install", "error: externally-managed-environment"),
                       parents=tuple(sorted(p.id for p in parents)),
                       supersedes=supersedes.id if supersedes else None), signing_key(author))


def revoke(author: str, target: SignedRecord | bytes, reason: str = "wrong", *, day: int = DAY + 1) -> SignedRecord:
    kind = TargetKind.KEY if isinstance(target, bytes) else TargetKind.RECORD
    return sign(Revocation(network=NETWORK, author=pub(author), created=day,
                           target=target if isinstance(target, bytes) else target.id, target_kind=kind,
                           reason=reason), signing_key(author))


def vouch(author: str, subject: str) -> SignedRecord:
    return sign(Vouch(network=NETWORK, author=pub(author), created=DAY, subject=pub(subject)), signing_key(author))


def _cases() -> list[tuple[str, str, Callable[[], dict[str, Any]]]]:
    def author_revokes() -> dict:
        a = lesson("alice", "pip install failed on Debian 12.")
        return {"held": [a, revoke("alice", a)]}

    def chain() -> dict:
        a = lesson("alice", "pip install failed on Debian 12.")
        b = lesson("bob", "pip install --user failed the same way.", parents=(a,))
        c = lesson("carol", "pipx worked where pip failed.", parents=(b,))
        return {"held": [a, b, c, revoke("alice", a)]}

    def diamond() -> dict:
        a = lesson("alice", "pip install failed on Debian 12.")
        b = lesson("bob", "pip download kept working on Debian 12.")
        c = lesson("carol", "Both happened on the same image.", parents=(a, b))
        d = lesson("carol", "The image was rebuilt afterwards.", parents=(c,))
        return {"held": [a, b, c, d, revoke("alice", a)]}

    def unauthorized() -> dict:
        a = lesson("alice", "pip install failed on Debian 12.")
        return {"held": [a, revoke("mallory", a)]}

    def below_threshold() -> dict:
        a = lesson("alice", "pip install failed on Debian 12.")
        return {"held": [a, revoke("auth1", a)], "authorities": ["auth1", "auth2"], "threshold": 2}

    def authorities() -> dict:
        a = lesson("alice", "pip install failed on Debian 12.")
        return {"held": [a, revoke("auth1", a), revoke("auth2", a, "spam")], "authorities": ["auth1", "auth2"],
                "threshold": 2}

    def key_itself() -> dict:
        a = lesson("mallory", "pip install failed on Debian 12.")
        v = vouch("mallory", "bob")
        return {"held": [a, v, revoke("mallory", pub("mallory"), "key stolen")],
                "arrivals": [lesson("mallory", "pip always works.", day=DAY + 2), revoke("mallory", a)]}

    def irrevocable() -> dict:
        a = lesson("alice", "pip install failed on Debian 12.")
        first = revoke("alice", a)
        return {"held": [a, first, revoke("alice", first)]}

    def pending() -> dict:
        a = lesson("alice", "pip install failed on Debian 12.")
        return {"held": [revoke("alice", a)], "arrivals": [a]}

    def supersedes() -> dict:
        a = lesson("alice", "pip install failed on Debian 12.")
        a2 = lesson("alice", "pip install into the system Python failed on Debian 12.", supersedes=a, day=DAY + 1)
        b = lesson("bob", "pip install --user failed the same way.", parents=(a,))
        return {"held": [a, a2, b]}

    def derived_after() -> dict:
        a = lesson("alice", "pip install failed on Debian 12.")
        late = lesson("bob", "pip install --user failed the same way.", parents=(a,), day=DAY + 2)
        return {"held": [a, revoke("alice", a)], "arrivals": [late, a]}

    def unresolved() -> dict:
        a = lesson("alice", "pip install failed on Debian 12.")
        b = lesson("bob", "pip install --user failed the same way.", parents=(a,))
        return {"held": [revoke("alice", a), b], "arrivals": [a]}

    def vouch_revoked() -> dict:
        v = vouch("alice", "bob")
        return {"held": [v, revoke("alice", v, "vouched by mistake")]}

    return [
        ("author", "a record's author revokes it: applied (author)", author_revokes),
        ("chain", "revoking a lesson takes down every lesson whose parents reach it, transitively", chain),
        ("diamond", "a lesson with one dead parent dies; its other parent lives", diamond),
        ("unauthorized", "a revocation by a key that is neither author nor authority is held, not applied",
         unauthorized),
        ("below-threshold", "one authority of a threshold of two: not applied yet", below_threshold),
        ("authorities", "two distinct authorities at threshold two: applied", authorities),
        ("key-itself", "a key revoking itself kills everything it signed, before and after, except its "
                       "revocations; what it signs later is refused", key_itself),
        ("irrevocable", "a revocation of a revocation is never applied", irrevocable),
        ("pending", "a revocation of a record not held waits; the record is refused on arrival if its "
                    "author signed the revocation", pending),
        ("supersedes", "a newer version supersedes the old one; lessons derived from the old one live",
         supersedes),
        ("derived-after", "a lesson derived from a revoked one is refused on arrival, and so is a replay "
                          "of the revoked one", derived_after),
        ("vouch", "a vouch's author revokes it: it gives no more trust", vouch_revoked),
        ("unresolved", "a lesson derived from a record never held that a revocation names is taken down "
                       "as unresolved, without a death certificate; the record is refused if it comes",
         unresolved),
    ]


def _hex_map(mapping: dict[bytes, Any]) -> dict[str, Any]:
    return {k.hex(): v for k, v in sorted(mapping.items())}


def conclude(held: list[SignedRecord], authorities: frozenset[bytes], threshold: int) -> dict[str, Any]:
    """What a conforming node concludes from ``held`` (shared by the generator and the test)."""
    revocations = resolve(held, authorities=authorities, threshold=threshold)
    authors = frozenset(s.record.author for s in held if isinstance(s.record, Lesson))
    policy = TrustPolicy(required=1, policy=Policy.ALLOWLIST, authors=authors,
                         revocation_authorities=authorities, revocation_threshold=threshold)
    view = evaluate(held, me=pub("observer"), policy=policy)
    return {
        "rulings": _hex_map({rid: v.ruling.value for rid, v in revocations.verdicts.items()}),
        "dead_ids": sorted(i.hex() for i in revocations.dead_ids),
        "dead_keys": sorted(k.hex() for k in revocations.dead_keys),
        "takedowns": _hex_map({rid: {"cause": t.cause.value, "revocations": [r.hex() for r in t.revocations],
                                     "chain": [c.hex() for c in t.chain]}
                               for rid, t in revocations.takedowns.items()}),
        "statuses": _hex_map({lid: state.status.value for lid, state in view.lessons.items()}),
    }


def _record(signed: SignedRecord) -> dict[str, str]:
    return {"type": signed.type.value, "id": signed.id.hex(), "body": signed.body.hex(),
            "signature": signed.signature.hex()}


def build() -> dict[str, Any]:
    cases = []
    for number, (name, comment, make) in enumerate(_cases(), start=1):
        spec = make()
        held = spec["held"]
        authorities = [pub(n) for n in spec.get("authorities", [])]
        threshold = spec.get("threshold", 2)
        revocations = resolve(held, authorities=frozenset(authorities), threshold=threshold)
        cases.append({
            "id": number, "name": name, "comment": comment,
            "authorities": spec.get("authorities", []), "threshold": threshold,
            "held": [_record(s) for s in held],
            **conclude(held, frozenset(authorities), threshold),
            "arrivals": [dict(_record(s), refusal=revocations.refuses(s)) for s in spec.get("arrivals", [])],
        })
    return {"_comment": COMMENT, "network": NETWORK.hex(), "keys": {n: pub(n).hex() for n in NAMES},
            "cases": cases}


def render() -> str:
    return json.dumps(build(), indent=1) + "\n"


if __name__ == "__main__":
    sys.exit(regenerate(sys.argv[1:], generator=Path(__file__), path=VECTORS_PATH, render=render))
