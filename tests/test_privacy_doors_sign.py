"""Shared means clean: classification keeps a scrubbed lesson local, and signing is the last gate."""

from __future__ import annotations

import nacl.signing
import pytest

from commons.core.records import Lesson, LessonKind, Prediction, Revocation, Scope, TargetKind, sign
from commons.core.learning.scope import classify
from commons.core.policy.scrubber import ScrubbedTextRequired

KEY = nacl.signing.SigningKey(b"\x07" * 32)
PASSWORD = "Tr0ub4dor&3xyz"


def _lesson(text: str, situation: str = "mysql", outcome: str = "access denied") -> Lesson:
    return Lesson(network=b"\x00" * 32, author=bytes(KEY.verify_key), created=20000, kind=LessonKind.ERROR,
                  text=text, scope=Scope.SHARED, topics=("mysql",), prediction=Prediction(situation, outcome))


@pytest.mark.parametrize("text", [
    '`docker push` failed with "unauthorized: auth <docker-auth> rejected"; `docker login` worked.',
    '`mysql` failed with "Access denied for user (using password <password>)"; `mysql -u app` worked.',
    '`pip install` failed with "Permission denied: ~/.local/lib"; `pip install --user` worked.',
    '`git push` failed with "Authentication failed for https://<github-token>@github.com"; `gh auth login` worked.',
])
def test_a_lesson_whose_text_the_scrubber_changed_is_never_classified_shared(text):
    decision = classify(text, ["docker push"])
    assert decision.scope is Scope.LOCAL
    assert "secret or personal detail" in decision.reason


def test_a_clean_lesson_about_a_tool_is_still_shared():
    text = '`pip install` failed with "error: externally-managed-environment"; `uv add httpx` worked.'
    assert classify(text, ["pip install"]).scope is Scope.SHARED


@pytest.mark.parametrize("field", ["text", "situation", "outcome"])
def test_signing_refuses_a_lesson_the_scrubber_would_still_change_naming_field_and_kind_not_value(field):
    words = {"text": "`mysql` failed.", "situation": "mysql", "outcome": "access denied"}
    words[field] += f" with the password is {PASSWORD}"
    with pytest.raises(ScrubbedTextRequired) as refused:
        sign(_lesson(words["text"], words["situation"], words["outcome"]), KEY)
    message = str(refused.value)
    assert "lesson record" in message and "password" in message
    assert PASSWORD not in message and "Tr0ub" not in message
    expected = {"text": "its text", "situation": "situation", "outcome": "outcome"}[field]
    assert expected in message


def test_signing_refuses_a_revocation_whose_reason_holds_a_key():
    revocation = Revocation(network=b"\x00" * 32, author=bytes(KEY.verify_key), created=20000, target=b"\x01" * 32,
                            target_kind=TargetKind.RECORD, reason="leaked AKIAMHP3W6W7Q3GXSC1F in it")
    with pytest.raises(ScrubbedTextRequired) as refused:
        sign(revocation, KEY)
    assert "aws_key" in str(refused.value) and "AKIA" not in str(refused.value)


def test_signing_a_clean_lesson_with_placeholders_goes_through():
    signed = sign(_lesson("`mysql` failed with the password <password>; `mysql -u app` worked."), KEY)
    assert signed.record.text.endswith("worked.")
