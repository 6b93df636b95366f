"""The web of trust kept up to date as live vouches arrive: :func:`commons.core.trust.evaluation.web_of_trust`
without making it again over every vouch held.

A key's place in the web is a matter of distances: an *anchor* is a non-root key a root vouches
for, and a key is reached through anchor ``a`` when some chain of vouches between non-root keys
leads from ``a`` to it in at most ``max_depth - 1`` hops; its depth is one more than its shortest
such chain. A new vouch can only shorten distances, so adding one is a search from its subject
bounded by the depth: only the keys whose distance to some anchor it shortens are visited (and
returned, so that only what they verified is judged again). Taking a vouch away (a revocation)
lengthens them; that is rare, and the caller makes the web again from the live vouches then.
"""

from __future__ import annotations

from collections import deque
from types import MappingProxyType

from commons.core.trust.evaluation import WebOfTrust


class IncrementalWeb:
    """The web of trust from ``roots`` over the live vouches added so far, within ``max_depth`` hops."""

    def __init__(self, roots: frozenset[bytes], max_depth: int) -> None:
        self.roots, self.max_depth = roots, max_depth
        self._out: dict[bytes, set[bytes]] = {}  # voucher -> the keys it vouches for
        self._reach: dict[bytes, dict[bytes, int]] = {}  # key -> anchor -> fewest hops from it
        self._depth: dict[bytes, int] = {}
        self._anchors: dict[bytes, frozenset[bytes]] = {}
        # Live mappings: the object stays the same while the web grows.
        self.web = WebOfTrust(roots=roots, depth=MappingProxyType(self._depth),
                              anchors=MappingProxyType(self._anchors))

    def add_edge(self, voucher: bytes, subject: bytes) -> set[bytes]:
        """Add one live vouch; returns the keys whose depth or anchors it changed."""
        subjects = self._out.setdefault(voucher, set())
        if subject in subjects:
            return set()
        subjects.add(subject)
        if subject in self.roots or self.max_depth < 1:  # roots are trusted outright, never anchored
            return set()
        if voucher in self.roots:
            return self._spread([(subject, subject, 0)])
        limit = self.max_depth - 1
        return self._spread([(subject, anchor, hops + 1)
                             for anchor, hops in self._reach.get(voucher, {}).items() if hops < limit])

    def _spread(self, starts: list[tuple[bytes, bytes, int]]) -> set[bytes]:
        limit = self.max_depth - 1
        moved: set[bytes] = set()
        queue = deque(starts)
        while queue:
            key, anchor, hops = queue.popleft()
            reach = self._reach.setdefault(key, {})
            if reach.get(anchor, limit + 1) <= hops:
                continue  # already reached through this anchor as closely
            reach[anchor] = hops
            moved.add(key)
            if hops < limit:
                queue.extend((onward, anchor, hops + 1) for onward in self._out.get(key, ())
                             if onward not in self.roots)
        changed = set()
        for key in moved:  # a shorter chain through an anchor already counted may change neither
            reach = self._reach[key]
            depth, anchors = 1 + min(reach.values()), frozenset(reach)
            if self._depth.get(key) != depth or self._anchors.get(key) != anchors:
                self._depth[key], self._anchors[key] = depth, anchors
                changed.add(key)
        return changed
