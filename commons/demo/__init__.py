"""`commons demo`: the walkthrough over the sessions in ``sessions/`` (``run``), with federation
(``federation``) and peer review and revocation (``review``)."""
