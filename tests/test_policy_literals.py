"""The literals a pattern cannot match without (commons/core/policy/literals.py): a gate that says
no only where the pattern cannot match, on any ASCII text, and says nothing where it cannot know."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commons.core.policy.literals import Gate, Gates, any_of, gate

# Each construct the reading knows, and the ones it must give up on.
_PATTERNS = [
    r"(?:ab|cd)e+f", r"x{2,3}yz", r"fo[oO]bar", r"(?-i:NOTE)\s*[:!]", r"\bdo\s+(?:not|n't)\b", r"(?:pre)?fix(?:es)?",
    r"(?<!not\s)always\s+run", r"(?:\w+\s+){1,3}?must", r"[.!?]\s+ok", r"k\u212a?ey", r"(?>ab|c)d",
    r"(?:one|two|three|four|five|six|seven|eight|nine|ten){2}", r"a|bc|(?:d|e)f", r"^\W*(?:agent|ai)\s*[,:!]",
    r"gpt-?\d[\w.]*", r"ab*c", r"(?:ab)+(?:cd)*e", r"a.b", r"[^x]yz", r"(a)\1b",
]


@pytest.mark.parametrize("pattern", _PATTERNS)
@settings(max_examples=150, suppress_health_check=list(HealthCheck), database=None, deadline=None)
@given(data=st.data())
def test_every_ascii_match_holds_the_gates_literals(pattern, data):
    compiled = re.compile(pattern, re.IGNORECASE | re.MULTILINE)
    found = gate(compiled)
    text = data.draw(st.from_regex(compiled, alphabet=st.characters(codec="ascii")))
    if found is not None and compiled.search(text):
        assert found.admits(text.lower()), (pattern, text, found)


@pytest.mark.parametrize("pattern", _PATTERNS)
@settings(max_examples=100, suppress_health_check=list(HealthCheck), database=None, deadline=None)
@given(data=st.data())
def test_a_gate_without_spaces_holds_for_the_text_before_its_blanks(pattern, data):
    """The door reads some patterns on a text whose quotes were made spaces; the gate reads the text
    as it was, so a blank the pattern matched may have been any character there."""
    compiled = re.compile(pattern, re.IGNORECASE | re.MULTILINE)
    found = gate(compiled, "blanked")
    blanked = data.draw(st.from_regex(compiled, alphabet=st.characters(codec="ascii")))
    original = "".join(data.draw(st.sampled_from(" \"'`x")) if ch == " " else ch for ch in blanked)
    if found is not None and compiled.search(blanked):
        assert found.admits(original.lower()), (pattern, blanked, original, found)


@pytest.mark.parametrize("pattern", _PATTERNS + [r"a\s+b", r"x\s*,?\s+y", r"^\s*(?:system|user)\s*:", r"[\s,]z"])
@settings(max_examples=100, suppress_health_check=list(HealthCheck), database=None, deadline=None)
@given(data=st.data())
def test_a_gate_for_single_spaced_texts_holds_on_every_folded_match(pattern, data):
    """On a text whose only white space is single spaces (the door's folded form) a run of white
    space is one space, which the gate may hold as a literal."""
    compiled = re.compile(pattern, re.IGNORECASE | re.MULTILINE)
    found = gate(compiled, "single")
    folded = " ".join(data.draw(st.from_regex(compiled, alphabet=st.characters(codec="ascii"))).split())
    if found is not None and compiled.search(folded):
        assert found.admits(folded.lower()), (pattern, folded, found)


def test_a_gate_asked_for_texts_it_does_not_know_says_so():
    with pytest.raises(ValueError, match="white space"):
        gate(re.compile("x"), "double")


@pytest.mark.parametrize("pattern", [r"\d+", r"[a-z]+", r"(?:make\s+)?sure|\w", r"x?y?", r".*"])
def test_a_pattern_that_may_match_without_a_literal_has_no_gate(pattern):
    assert gate(re.compile(pattern)) is None


def test_a_gate_turns_away_a_text_without_its_literals():
    found = gate(re.compile(r"\bignore\s+(?:all\s+)?previous\s+instructions|\[/?inst\]", re.IGNORECASE))
    assert found is not None
    assert not found.admits("run the tests again")
    assert not found.admits("ignore the flaky test")  # one clause of the alternative, not both
    assert found.admits("please ignore all previous instructions".lower())
    assert found.admits("[inst]")


def test_ignorecase_letters_beyond_ascii_that_match_ascii_ones_give_no_literal():
    # "\u212a" (the Kelvin sign) matches "k" under IGNORECASE: it must not be read as a letter no ASCII text holds
    kelvin = gate(re.compile("\u212aey", re.IGNORECASE))
    assert kelvin is None or kelvin.admits("key")
    assert re.search("\u212aey", "key", re.IGNORECASE)


def test_a_pattern_no_ascii_text_matches_has_no_alternatives():
    found = gate(re.compile(r"(?:игнорируй|забудь)\s+все", re.IGNORECASE))
    assert found is not None and found.alternatives == ()


@settings(max_examples=300, database=None, deadline=None)
@given(strings=st.lists(st.text(alphabet="ab.c( ", max_size=4), max_size=8), text=st.text(alphabet="ab.c( x", max_size=30))
def test_a_trie_of_strings_finds_one_exactly_where_one_occurs(strings, text):
    assert (any_of(strings).search(text) is not None) == any(s in text for s in strings)


_CLAUSE = st.frozensets(st.text(alphabet="abc.", min_size=1, max_size=4), min_size=1, max_size=4)
_GATE = st.lists(st.lists(_CLAUSE, min_size=1, max_size=2).map(tuple), min_size=1, max_size=3).map(lambda a: Gate(tuple(a)))


@settings(max_examples=400, database=None, deadline=None)
@given(gates=st.lists(_GATE, min_size=1, max_size=4), text=st.text(alphabet="abc.x", max_size=24))
def test_gates_read_in_one_pass_answer_as_each_gate_read_alone(gates, text):
    """Strings of several gates overlap in a text and hold one another ("ab" in "abc"): the one
    pass must still see each of them."""
    admitted = Gates(gates).admitted(text)
    for i, g in enumerate(gates):
        alone = any(all(any(s in text for s in clause) for clause in clauses) for clauses in g.alternatives)
        assert bool(admitted >> i & 1) == alone, (g, text)
