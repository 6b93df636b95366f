"""The first door: an episode's derived fields are scrubbed when the builder makes them."""

from __future__ import annotations

import json

from commons.core.learning.episode import CorrectionEpisode, ErrorEpisode
from commons.core.policy.scrubber import is_clean
from commons.ingest.episodes import SAID_CHARS, BuildState, EpisodeBuilder
from commons.ingest.turns import AgentSaid, PersonSaid, SessionSeen, ToolCalled, ToolRejected, ToolReturned

TOKEN = "ghp_NqVwYS81VP7Hb1DX8pPd5khxE3pyIgKpaUnA"
SENDGRID = "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"
PASSWORD = "hunter2x!"


def _turns():
    return [
        SessionSeen(session="s1", project="/home/okonkwo/src/app", at=10.0),
        PersonSaid("p1", 10.0, f"push it, the token is {TOKEN}"),
        ToolCalled("c1", "Bash", f"git push https://{TOKEN}@github.com/acme/api.git", at=11.0),
        ToolReturned("c1", "r1", 12.0, ok=False,
                     output=f"fatal: Authentication failed for 'https://{TOKEN}@github.com/acme/api.git/'"),
        ToolCalled("c2", "Bash", f"mysql -u root -p{PASSWORD} shop", at=13.0),
        ToolReturned("c2", "r2", 14.0, ok=True, output=""),
        AgentSaid(15.0, f"I used /home/okonkwo/.netrc (the password is {PASSWORD}) to log in; done."),
        # The key sits across the cut: a cut made before scrubbing would halve it.
        PersonSaid("p2", 16.0, "no, wrong. " + "x " * ((SAID_CHARS - 50) // 2) + f"the key is {SENDGRID}"),
        ToolCalled("c3", "Bash", f"curl -H 'Authorization: Bearer {TOKEN}' https://api.acme.io", at=17.0),
        ToolRejected("c3", "u3", 18.0, words=f"don't, use {SENDGRID} instead"),
    ]


def _texts(episode) -> list[str]:
    if isinstance(episode, ErrorEpisode):
        res = episode.resolution
        return [episode.target, episode.failure, episode.command, *(([res.command, *res.steps]) if res else [])]
    if isinstance(episode, CorrectionEpisode):
        return [episode.said, episode.preceding, episode.command]
    return [*episode.asked, episode.ended, *(c.target for c in episode.calls)]


def _built():
    builder = EpisodeBuilder(BuildState())
    for turn in _turns():
        builder.feed(turn)
    return builder


def test_no_planted_value_reaches_any_field_of_any_episode():
    builder = _built()
    episodes = [*builder.episodes(), builder.session_episode()]
    assert {type(e).__name__ for e in episodes} == {"ErrorEpisode", "CorrectionEpisode", "SessionEpisode"}
    for episode in episodes:
        for text in _texts(episode):
            assert TOKEN[:12] not in text and SENDGRID[:12] not in text and PASSWORD not in text, text
            assert "okonkwo" not in text, text
            assert is_clean(text), text


def test_fields_keep_reading_with_typed_placeholders():
    builder = _built()
    (error,) = [e for e in builder.episodes() if isinstance(e, ErrorEpisode)]
    assert error.failure == "fatal: Authentication failed for 'https://<github-token>@github.com/acme/api.git/'"
    assert error.target == "git push https://<github-token>@github.com/acme/api.git"
    session = builder.session_episode()
    assert session.asked[0] == "push it, the token is <github-token>"
    assert session.ended == "I used ~/.netrc (the password is <password>) to log in; done."


def test_a_quote_is_cut_after_scrubbing_so_a_key_across_the_cut_becomes_its_placeholder():
    builder = _built()
    (worded,) = [e for e in builder.episodes() if isinstance(e, CorrectionEpisode) and not e.via_rejection]
    assert len(worded.said) <= SAID_CHARS
    assert worded.said.endswith("the key is <sendgrid-key>")


def test_the_saved_state_carries_no_planted_value_in_what_it_will_emit():
    state = _built().snapshot().to_json()
    emitted = {k: state[k] for k in ("asked", "ended", "turn_text", "calls", "open_errors")}
    blob = json.dumps(emitted)
    assert TOKEN not in blob and PASSWORD not in blob and SENDGRID not in blob and "okonkwo" not in blob


def test_the_project_directory_stays_as_written_to_find_the_projects_memory_folder():
    assert _built().session_episode().project == "/home/okonkwo/src/app"
