"""Webs of trust for the sybil scenario: an honest small-world vouch graph and an attacker's keys.

**Honest web.** Honest keys sit on a ring, as people sit in overlapping circles; each key vouches
for its ``degree`` nearest neighbours (``degree // 2`` on each side), and each of those vouches is
rewired, with probability ``rewire``, to a key drawn uniformly from the whole ring -- the
Watts-Strogatz construction: high clustering (friends of friends are friends) with short paths.
So every key vouches for ``degree`` others and is vouched for by about ``degree``.

**Attacker.** ``sybils`` keys. ``attack_edges`` honest keys, drawn at random (the people the
attacker fooled), each vouch for one *gateway* attacker key; every gateway vouches for every other
attacker key (the densest web the attacker can build: it costs him nothing). The false lesson is
signed by one more attacker key that never verifies it.

**What an honest node must hold to evaluate.** ``trust.web_of_trust`` walks vouches from the roots
for ``max_depth`` hops, so only vouches *signed by* keys fewer than ``max_depth`` hops from the
roots can change its result. :meth:`Web.relevant_vouches` returns exactly those, which makes
evaluating 10,000 nodes cheap without changing any verdict.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass

from commons.core import records as rec
from simulations import authors


def small_world(size: int, degree: int, rewire: float, rng: random.Random) -> list[list[int]]:
    """Out-neighbours of each key: ring neighbours, each rewired to a random key with ``rewire``."""
    half = max(1, degree // 2)
    out: list[list[int]] = []
    for i in range(size):
        chosen: list[int] = []
        for step in (*range(1, half + 1), *range(-1, -half - 1, -1)):
            j = (i + step) % size
            if rng.random() < rewire:
                j = rng.randrange(size)
            if j != i and j not in chosen:
                chosen.append(j)
        out.append(chosen)
    return out


def honest_label(i: int) -> str:
    return f"honest/{i}"


def sybil_label(k: int) -> str:
    return f"sybil/{k}"


@dataclass
class Web:
    honest: int
    out: list[list[int]]  # honest vouch graph
    attack_edges: list[tuple[int, int]]  # (honest index, gateway sybil index)
    sybils: int
    vouches_by_author: dict[bytes, list[rec.SignedRecord]]
    honest_keys: list[bytes]

    @classmethod
    def build(cls, honest: int, sybils: int, attack_edges: int, rng: random.Random, *,
              degree: int = 4, rewire: float = 0.2) -> Web:
        out = small_world(honest, degree, rewire, rng)
        fooled = rng.sample(range(honest), attack_edges)
        edges = [(h, k) for k, h in enumerate(fooled)]
        keys = [authors.author(honest_label(i)) for i in range(honest)]
        sybil_keys = [authors.author(sybil_label(k)) for k in range(sybils)]
        by_author: dict[bytes, list[rec.SignedRecord]] = defaultdict(list)
        for i, targets in enumerate(out):
            by_author[keys[i]] = [authors.vouch(honest_label(i), keys[j]) for j in targets]
        for h, k in edges:
            by_author[keys[h]].append(authors.vouch(honest_label(h), sybil_keys[k]))
        for k in range(attack_edges):
            by_author[sybil_keys[k]] = [authors.vouch(sybil_label(k), sybil_keys[m]) for m in range(sybils) if m != k]
        return cls(honest, out, edges, sybils, dict(by_author), keys)

    def relevant_vouches(self, me: bytes, max_depth: int) -> list[rec.SignedRecord]:
        """Every vouch signed by a key fewer than ``max_depth`` hops from ``me`` (see the module doc)."""
        chosen: list[rec.SignedRecord] = []
        seen = {me}
        layer = [me]
        for _ in range(max_depth):
            following = []
            for key in layer:
                for signed in self.vouches_by_author.get(key, ()):
                    chosen.append(signed)
                    subject = signed.record.subject
                    if subject not in seen:
                        seen.add(subject)
                        following.append(subject)
            layer = following
        return chosen

    def exposure(self, i: int, max_per_voucher: int) -> int:
        """The most attacker outcomes the default policy can count at honest node i (roots = me).

        Its own attack edge puts a gateway one hop away, an anchor worth ``max_per_voucher``; each
        key it vouches for that has an attack edge puts a gateway two hops away, worth one (the
        gateway alone: the keys behind it are three hops away).
        """
        fooled = defaultdict(int)
        for h, _ in self.attack_edges:
            fooled[h] += 1
        return fooled[i] * max_per_voucher + sum(fooled[j] for j in self.out[i])
