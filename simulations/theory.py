"""What gossip theory predicts for the rounds a rumour takes to reach N nodes, to read the
simulations' rounds against (docs/simulations.md, "Scale").

* **Push-pull** (every informed and uninformed node calls one random node each synchronous round
  and they exchange the rumour): log3 N + O(log log N) rounds (Karp, Schindelhauer, Shenker and
  Vöcking, "Randomized Rumor Spreading", FOCS 2000). ``push_pull`` gives the leading term plus
  ln ln N, as a reference curve: the constant inside O() is not known.
* **Push** alone (informed nodes call): log2 N + ln N rounds (Frieze and Grimmett 1985; Pittel 1987).
* **Flooding a random graph** of mean degree d (every node relays to all its neighbours at once):
  the depth of a breadth-first tree, about ln N / ln(d - 1) -- the fewest hops any path can take.
* **First-passage hops** on a random graph whose links have independent exponential delays: the
  path the fastest copy took has about nu / (nu - 1) * ln N hops, nu the mean number of further
  neighbours (d - 1 on a d-regular graph; Bhamidi, van der Hofstad and Hooghiemstra, "First passage
  percolation on random graphs with finite mean degrees", Ann. Appl. Probab. 2010). A round here is
  such a path -- a node takes the body from whoever announced it first, so bodies follow the fastest
  path, not the shortest -- but our delays are not independent per link: a link costs both ends'
  access latencies plus their regions' backbone, so fast nodes are fast on every link. The
  simulated hops fall between the flooding depth (delays all alike) and this (delays as random as
  they come).
"""

from __future__ import annotations

import math


def push_pull(nodes: int) -> float:
    return math.log(nodes, 3) + math.log(math.log(nodes))


def push(nodes: int) -> float:
    return math.log2(nodes) + math.log(nodes)


def flood_depth(nodes: int, degree: float) -> float:
    return math.log(nodes) / math.log(degree - 1)


def first_passage_hops(nodes: int, degree: float) -> float:
    """With nu = degree - 1, the mean degree standing for a regular graph's."""
    return (degree - 1) / (degree - 2) * math.log(nodes)


def median_round(curve: list[float] | tuple[float, ...]) -> int | None:
    """The first round by which half the nodes held the item (``curve[r]``: the fraction by round r)."""
    return next((r for r, fraction in enumerate(curve) if fraction >= 0.5), None)
