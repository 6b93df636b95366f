"""The naivety rule (docs/trust.md): a verification counts as independent evidence only if its
author had not already published a similar lesson before receiving the one it verifies.

Checkable by anyone from the records alone: "similar" is, by default, the same normalised text or
the same normalised prediction (:func:`same_lesson`); ``evaluate`` may be given another rule.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Mapping

from commons.core.records import Lesson

_NON_WORD = re.compile(r"[\W_]+")


# ASCII's non-word characters (what ``_NON_WORD`` matches there) made spaces, in one C pass.
_ASCII_SPACES = bytes(32 if _NON_WORD.fullmatch(chr(c)) else c for c in range(256))


def similarity_key(text: str) -> str:
    """Text as compared for similarity: NFKC, case-folded, punctuation and spacing collapsed."""
    if text.isascii():  # NFKC leaves ASCII as it is and casefold is lower: the same key, 3x faster
        return b" ".join(text.encode().lower().translate(_ASCII_SPACES).split()).decode()
    return " ".join(_NON_WORD.sub(" ", unicodedata.normalize("NFKC", text).casefold()).split())


def _text_key(lesson: Lesson) -> str:
    return similarity_key(lesson.text)


def _prediction_key(lesson: Lesson) -> tuple[str, str]:
    return similarity_key(lesson.prediction.situation), similarity_key(lesson.prediction.outcome)


def form_keys(lesson: Lesson) -> tuple[object, object]:
    """What the default similarity compares, kept small: the hashes of the normalised text and
    prediction (64 bits each; the evaluation of a million lessons holds these, not the strings)."""
    return hash(_text_key(lesson)), hash(_prediction_key(lesson))


def same_lesson(a: Lesson, b: Lesson) -> bool:
    """The default similarity: equal normalised text, or equal normalised prediction."""
    return _text_key(a) == _text_key(b) or _prediction_key(a) == _prediction_key(b)


Similar = Callable[[Lesson, Lesson], bool]


class Naivety:
    """Answers: did ``key`` author a lesson similar to lesson ``lid`` before day ``received``?"""

    def __init__(self, lessons: Mapping[bytes, Lesson], similar: Similar):
        self._similar = similar
        self._lessons = lessons
        self._by_author: dict[bytes, list[Lesson]] = defaultdict(list)  # custom similarity only
        self._forms: dict[bytes, tuple[object, object]] = {}  # lesson id -> its forms, unless it carries them
        self._first: dict[bytes, dict[object, int]] = {}  # author -> text or prediction form -> first day
        for lid, lesson in lessons.items():
            self.add(lid, lesson)

    @property
    def indexed(self) -> bool:
        """Whether similarity is the default one, answered through the form index."""
        return self._similar is same_lesson

    def add(self, lid: bytes, lesson: Lesson, forms: tuple[object, object] | None = None) -> tuple[object, ...]:
        """Index one more lesson (already in the ``lessons`` mapping); returns its forms (indexed only).
        ``forms``: its :func:`form_keys`, carried by the lesson held (trust's facts do)."""
        if not self.indexed:
            self._by_author[lesson.author].append(lesson)
            return ()
        if forms is None:
            forms = self._forms[lid] = form_keys(lesson)
        first = self._first.setdefault(lesson.author, {})
        for form in forms:
            day = first.get(form)
            if day is None or lesson.created < day:
                first[form] = lesson.created
        return forms

    def contradicted(self, key: bytes, lid: bytes, received: int) -> bool:
        if self._similar is same_lesson:  # indexed: one lookup per form instead of one call per lesson
            first = self._first.get(key)
            if first is None:
                return False
            text, prediction = self._forms.get(lid) or self._lessons[lid].forms
            return first.get(text, received) < received or first.get(prediction, received) < received
        if key not in self._by_author:
            return False
        lesson = self._lessons[lid]
        return any(own.created < received and self._similar(own, lesson) for own in self._by_author[key])
