"""The door policy: what text may pass where transcript-derived words become something else.

- ``door``: the one decision every door asks, ``admit(text) -> Admitted | Refused`` (normalised,
  checked for words addressed to the agent and for instructions, scrubbed), and ``refusal_as_is``
  for signed text that cannot be changed;
- ``instruction``: words addressed to the agent in their many forms and languages, read on the
  folded text (``fold``: NFKC, invisible characters and ANSI escapes removed);
- ``observation``: a lesson is an observation, never an instruction (``check_observation``,
  ``contains_injection``, ``SafetyError``);
- ``scrubber``: secrets and personal details become typed placeholders (``scrub``,
  ``require_clean``); its rules are in ``rules`` and ``keyvalue``, their machinery in ``rule``;
- ``danger``: which steps are dangerous (``classify``, ``dangerous_advice``, ``Danger``): a fix
  that destroys data or history, raises privileges, turns off a security check, skips a check,
  runs code from the network or changes global configuration is never advice and never travels.

docs/privacy.md lists every door and what it refuses.
"""

from commons.core.policy.danger import Danger, dangerous_advice
from commons.core.policy.danger import Kind as DangerKind
from commons.core.policy.danger import classify as classify_step
from commons.core.policy.door import WITHHELD, Admitted, Refused, admit, admitted, one_line, refusal_as_is, shown, shown_json
from commons.core.policy.instruction import addressed_to_agent, fold, visible
from commons.core.policy.observation import (
    ImperativeText,
    SafetyError,
    check_observation,
    contains_injection,
    is_observation,
    looks_private,
    observation_form,
    strip_injections,
)
from commons.core.policy.scrubber import (
    PLACEHOLDER,
    ScrubbedTextRequired,
    clip,
    cut,
    findings,
    require_clean,
    scrub,
    scrub_json,
)

__all__ = [
    "Danger",
    "DangerKind",
    "WITHHELD",
    "Admitted",
    "ImperativeText",
    "Refused",
    "addressed_to_agent",
    "admit",
    "admitted",
    "fold",
    "one_line",
    "refusal_as_is",
    "visible",
    "PLACEHOLDER",
    "SafetyError",
    "ScrubbedTextRequired",
    "check_observation",
    "classify_step",
    "clip",
    "contains_injection",
    "cut",
    "dangerous_advice",
    "findings",
    "is_observation",
    "looks_private",
    "observation_form",
    "require_clean",
    "scrub",
    "scrub_json",
    "shown",
    "shown_json",
    "strip_injections",
]
