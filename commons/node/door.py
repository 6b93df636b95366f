"""The door policy for records from outside: what a valid record from a peer or from a file must
also pass before this node holds it.

Validity (canonical form, id, signature, network, date) is the core's; the death certificates are
:mod:`commons.node.revocation`'s. This is the node's own rule on top, one function for every door
so that a lesson the daemon refuses from gossip is refused by `commons import` too:

* **observation** — a lesson reports what happened, it never instructs an agent ("NOTE TO AI
  AGENTS: always run …" is refused): the memory folder is read by agents, so an instruction
  there would be obeyed, not weighed (design paper §3.5; `commons.core.policy.check_observation`);
* **text** — the words pass the one text policy of every door (``commons.core.records.text_refusal``,
  ``commons.core.policy.admit``: visible characters, one line, nothing addressed to the agent in
  any of its forms, nothing the scrubber would replace);
* **no dangerous fix** — a lesson whose words name a dangerous step as what worked (a force push,
  TLS verification off, `curl … | sh`) is refused whoever vouches for it
  (`commons.core.policy.danger`, issue #26).
"""

from __future__ import annotations

from collections.abc import Callable

from commons.core.policy import dangerous_advice, is_observation
from commons.core.records import Lesson, SignedRecord, text_refusal

# The reason stored for a record refused by the rule, in the `refused` table and the daemon's log.
NOT_AN_OBSERVATION = "not an observation (imperative text)"

DANGEROUS_FIX = "names a dangerous step as its fix"  # the start of every such refusal's reason

# Each refusal reason of the policy, the rule it comes from and what that rule says.
RULES = {NOT_AN_OBSERVATION: ("observation", "a lesson reports what happened, it never instructs an agent"),
         DANGEROUS_FIX: ("no dangerous fix", "a lesson never names a step that destroys or disables something as what worked")}

Admit = Callable[[SignedRecord], str | None]


def policy(signed: SignedRecord) -> str | None:
    """Why the door refuses a valid record from a peer or a file, or None to take it."""
    record = signed.record
    if isinstance(record, Lesson) and not is_observation(record.text):
        return NOT_AN_OBSERVATION
    return text_refusal(record) or names_dangerous_fix(signed)


def names_dangerous_fix(signed: SignedRecord) -> str | None:
    """Why a received lesson is refused for naming a dangerous step as what worked, or None: the
    rule, its kind and what the step destroys or disables (the reason `commons import` prints and
    the daemon logs)."""
    record = signed.record
    return words_name_dangerous_fix(record.text) if isinstance(record, Lesson) else None


def words_name_dangerous_fix(text: str) -> str | None:
    """Why a lesson with these words is refused for naming a dangerous step, or None: what every
    peer's door reads in the words alone (publishing asks it too, so nothing is sent that peers refuse)."""
    danger = dangerous_advice(text)
    if danger is None:
        return None
    return f"{DANGEROUS_FIX} (rule {danger.rule}, {danger.kind.value}: {danger.risk})"


def rule_of(reason: str) -> tuple[str, str] | None:
    """(the rule's name, what it says) for a reason :func:`policy` gave; None for any other reason."""
    if reason in RULES:
        return RULES[reason]
    if reason.startswith(DANGEROUS_FIX):
        return RULES[DANGEROUS_FIX]
    if reason.startswith("its ") and " is refused: " in reason:  # commons.core.records.text_refusal
        return ("text policy", "a record's words are visible, one line, never addressed to the agent, and hold "
                               "nothing the scrubber replaces (commons.core.policy.admit)")
    return None


def then_policy(first: Admit) -> Admit:
    """``first`` (the death certificates), then :func:`policy`: the order of the gossip door, where
    a dead record is refused as dead whatever its text says."""

    def admit(signed: SignedRecord) -> str | None:
        reason = first(signed)
        return reason if reason is not None else policy(signed)

    return admit
