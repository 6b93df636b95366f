"""Trust: what the records a node holds amount to, as this node sees it.

- ``evaluation``: :func:`evaluate`, the policy (:class:`TrustPolicy`) and the statuses it derives
  (which confirmations count, which lessons are common);
- ``incremental``: :class:`IncrementalTrust`, the same result kept up to date batch by batch, over
  the compact ``facts`` of each record and the web of trust grown in ``web``;
- ``naivety``: the checkable rule that a verifier had not published a similar lesson before;
- ``fixes``: what fix a lesson claims, and what a verification of it counts as (common means the
  fix was confirmed);
- ``revocation``: who may revoke what, and everything a revocation takes down.

docs/trust.md holds the attack model and the reasons for the defaults.
"""

from commons.core.trust.evaluation import LessonState, LessonStatus, Policy, TrustPolicy, TrustView, evaluate
from commons.core.trust.facts import Fact
from commons.core.trust.fixes import FixClaim, counted_outcome, fix_claim, tests_fix
from commons.core.trust.incremental import IncrementalTrust
from commons.core.trust.revocation import (
    Cause,
    REFUSED_AS_DEAD,
    Refusal,
    Revocations,
    refused_as_dead,
    resolve,
)

__all__ = [
    "Cause",
    "Fact",
    "FixClaim",
    "IncrementalTrust",
    "LessonState",
    "LessonStatus",
    "Policy",
    "REFUSED_AS_DEAD",
    "Refusal",
    "Revocations",
    "TrustPolicy",
    "TrustView",
    "counted_outcome",
    "evaluate",
    "fix_claim",
    "refused_as_dead",
    "resolve",
    "tests_fix",
]
