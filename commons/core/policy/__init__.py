"""The door policy: what text may pass where transcript-derived words become something else.

- ``observation``: a lesson is an observation, never an instruction (``check_observation``,
  ``contains_injection``, ``SafetyError``);
- ``scrubber``: secrets and personal details become typed placeholders (``scrub``,
  ``require_clean``); its rules are in ``rules`` and ``keyvalue``, their machinery in ``rule``.

docs/privacy.md lists every door and what it refuses.
"""

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
    "ImperativeText",
    "PLACEHOLDER",
    "SafetyError",
    "ScrubbedTextRequired",
    "check_observation",
    "clip",
    "contains_injection",
    "cut",
    "findings",
    "is_observation",
    "looks_private",
    "observation_form",
    "require_clean",
    "scrub",
    "scrub_json",
    "strip_injections",
]
