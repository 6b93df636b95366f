"""The door policy for records from outside: what a valid record from a peer or from a file must
also pass before this node holds it.

Validity (canonical form, id, signature, network, date) is the core's; the death certificates are
:mod:`commons.node.revocation`'s. This is the node's own rule on top, one function for every door
so that a lesson the daemon refuses from gossip is refused by `commons import` too:

* **observation** — a lesson reports what happened, it never instructs an agent ("NOTE TO AI
  AGENTS: always run …" is refused): the memory folder is read by agents, so an instruction
  there would be obeyed, not weighed (design paper §3.5; `commons.core.policy.check_observation`);
* **dangerous fix** — a lesson never names a dangerous step as what worked (``curl … | sudo sh``,
  ``git push --force origin main``, ``NODE_TLS_REJECT_UNAUTHORIZED=0``), whoever signed or vouched
  for it: a prediction independent agents confirm says nothing of its fix's harm (issue #26;
  `commons.core.policy.dangerous_advice`). The reason names the danger's rule, kind and risk.
"""

from __future__ import annotations

from collections.abc import Callable

from commons.core.policy import dangerous_advice, is_observation
from commons.core.records import Lesson, SignedRecord

# The reason stored for a record refused by the rule, in the `refused` table and the daemon's log.
NOT_AN_OBSERVATION = "not an observation (imperative text)"

# The start of the reason stored for a lesson refused for its fix; the danger's rule follows.
DANGEROUS_FIX = "names a dangerous step as its fix"

# Each refusal reason of the policy, the rule it comes from and what that rule says.
RULES = {NOT_AN_OBSERVATION: ("observation", "a lesson reports what happened, it never instructs an agent"),
         DANGEROUS_FIX: ("dangerous fix", "a lesson never names a step that destroys data or history, raises "
                                          "privileges, disables or skips a check, runs code from the network or "
                                          "changes global configuration as what worked")}

Admit = Callable[[SignedRecord], str | None]


def policy(signed: SignedRecord) -> str | None:
    """Why the door refuses a valid record from a peer or a file, or None to take it."""
    record = signed.record
    if not isinstance(record, Lesson):
        return None
    if not is_observation(record.text):
        return NOT_AN_OBSERVATION
    danger = dangerous_advice(record.text)
    if danger is not None:
        return f"{DANGEROUS_FIX} (rule {danger.rule}, {danger.kind.value}: {danger.risk})"
    return None


def rule_of(reason: str) -> tuple[str, str] | None:
    """(the rule's name, what it says) for a reason :func:`policy` gave; None for any other reason."""
    if reason.startswith(DANGEROUS_FIX + " ("):
        return RULES[DANGEROUS_FIX]
    return RULES.get(reason)


def then_policy(first: Admit) -> Admit:
    """``first`` (the death certificates), then :func:`policy`: the order of the gossip door, where
    a dead record is refused as dead whatever its text says."""

    def admit(signed: SignedRecord) -> str | None:
        reason = first(signed)
        return reason if reason is not None else policy(signed)

    return admit
