"""The scrubber over the privacy corpus (tests/privacy/corpus.py): every planted secret goes,
every benign string stays."""

from __future__ import annotations

import pytest

from commons.core.policy.scrubber import findings, is_clean, scrub
from tests.privacy.corpus import BENIGN, CONTEXTS, FORMATS, cases

WINDOW = 8  # no run of this many characters of a planted secret may survive


def _leaks(secret: str, text: str) -> list[str]:
    if len(secret) <= WINDOW:
        return [secret] if secret in text else []
    return [secret[i:i + WINDOW] for i in range(len(secret) - WINDOW + 1) if secret[i:i + WINDOW] in text]


def test_corpus_has_at_least_thirty_formats_in_three_contexts():
    assert len(FORMATS) >= 30
    assert len({f.name for f in FORMATS}) == len(FORMATS)
    assert {c.context for c in cases()} == set(CONTEXTS)
    assert len(cases()) == 3 * len(FORMATS)


@pytest.mark.parametrize("case", cases(), ids=lambda c: f"{c.format.name}-{c.context}")
def test_planted_secret_does_not_survive_scrubbing(case):
    assert case.format.secret in case.text  # the corpus really plants it
    out = scrub(case.text)
    assert _leaks(case.format.secret, out) == [], out
    assert case.format.kind.value in out, out


@pytest.mark.parametrize("case", cases(), ids=lambda c: f"{c.format.name}-{c.context}")
def test_scrubbed_corpus_text_is_a_fixed_point(case):
    out = scrub(case.text)
    assert scrub(out) == out
    assert is_clean(out)
    assert not is_clean(case.text)


@pytest.mark.parametrize("text", BENIGN)
def test_benign_text_comes_through_unchanged(text):
    assert scrub(text) == text, findings(text)


def test_benign_set_is_large_enough_to_measure_a_rate():
    assert len(BENIGN) >= 40
