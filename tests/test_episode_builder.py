"""The one episode builder, fed turns directly as any agent's reader would feed it."""

from __future__ import annotations

import json

from commons.core.learning.episode import CorrectionEpisode, ErrorEpisode
from commons.core.learning.evidence import Evidence
from commons.ingest.episodes import BuildState, EpisodeBuilder
from commons.ingest.turns import AgentSaid, PersonSaid, SessionSeen, ToolCalled, ToolReturned

NO_UPSTREAM = ("fatal: The current branch feat-x has no upstream branch.\n"
               "To push the current branch and set the remote as upstream, use\n\n"
               "    git push --set-upstream origin feat-x\n")
TURNS = [
    SessionSeen(session="s1", project="/home/dev/src/app", at=10.0),
    PersonSaid("p1", 10.0, "push the branch"),
    ToolCalled("c1", "shell", "git push", at=11.0),
    ToolReturned("c1", "r1", 12.0, ok=False, output="Exit code 128\n" + NO_UPSTREAM),
    ToolCalled("c2", "shell", "git push --set-upstream origin feat-x", at=13.0),
    ToolReturned("c2", "r2", 14.0, ok=True, output=""),
    AgentSaid(15.0, "Done: the branch is pushed."),
    PersonSaid("p2", 16.0, "the CI run fails on it though"),
]


def _run(turns, state=BuildState()):
    builder = EpisodeBuilder(state)
    for turn in turns:
        builder.feed(turn)
    return builder


def test_turns_from_any_format_become_an_error_with_its_resolution_and_a_correction():
    builder = _run(TURNS)
    (error,) = [e for e in builder.episodes() if isinstance(e, ErrorEpisode)]
    assert error.failure == "fatal: The current branch feat-x has no upstream branch."
    assert error.resolution.evidence is Evidence.RETRY_CHANGED and error.exit_code == 128
    assert error.resolution.command == "git push --set-upstream origin feat-x"
    assert error.resolution.confidence > 0.8  # the error's own output named the retry
    (corr,) = [e for e in builder.episodes() if isinstance(e, CorrectionEpisode)]
    assert corr.after_done and corr.uid == "p2"
    assert builder.session_episode().project == "/home/dev/src/app"


def test_stopping_after_any_turn_and_going_on_from_the_saved_state_changes_nothing():
    whole = _run(TURNS)
    for cut in range(len(TURNS) + 1):
        first = _run(TURNS[:cut])
        saved = BuildState.from_json(json.loads(json.dumps(first.snapshot().to_json())))
        second = _run(TURNS[cut:], saved)
        latest = {(e.kind, e.uid): e for e in (*first.episodes(), *second.episodes())}
        assert set(latest.values()) == set(whole.episodes()), cut
        assert second.snapshot() == whole.snapshot()


def test_only_the_agents_last_words_before_they_are_read_are_scrubbed(monkeypatch):
    import commons.ingest.episodes as episodes

    scrubbed: list[str] = []
    real = episodes.scrub
    monkeypatch.setattr(episodes, "scrub", lambda text: scrubbed.append(text) or real(text))
    said = [AgentSaid(11.0 + n, f"step {n}: token ghp_{'a1b2' * 9} set") for n in range(50)]
    builder = _run([SessionSeen(session="s1", at=10.0), PersonSaid("p1", 10.0, "set it up"), *said,
                    PersonSaid("p2", 70.0, "no, the other token")])
    (corr,) = [e for e in builder.episodes() if isinstance(e, CorrectionEpisode)]
    assert corr.preceding == "step 49: token <github-token> set"
    assert builder.session_episode().ended == "step 49: token <github-token> set"
    assert builder.snapshot().turn_text == "" and builder.snapshot().ended == corr.preceding
    assert sum(t.startswith("step") for t in scrubbed) == 1  # the 49 words said over were never scrubbed


def test_a_step_run_again_after_its_fix_is_listed_again_so_a_verifier_sees_the_fix_confirmed():
    from commons.core.records import Fix
    from commons.node.review import FIX_CONFIRMED, Judgement, fix_judgement, sessions_by_uid

    tidy = "go: updates to go.mod needed; to update it:\n\tgo mod tidy"
    builder = _run([
        SessionSeen(session="s1", project="/home/dev/src/app", at=10.0),
        PersonSaid("p1", 10.0, "add a test for the store package"),
        ToolCalled("c1", "shell", "go test ./...", at=11.0),
        ToolReturned("c1", "r1", 12.0, ok=False, output="Exit code 1\n" + tidy),
        ToolCalled("c2", "shell", "cat go.mod", at=13.0),
        ToolReturned("c2", "r2", 14.0, ok=True, output="module example.com/app"),
        ToolCalled("c3", "shell", "go mod tidy", at=15.0),
        ToolReturned("c3", "r3", 16.0, ok=True, output=""),
        ToolCalled("c4", "shell", "go test ./...", at=17.0),
        ToolReturned("c4", "r4", 18.0, ok=True, output="ok  \texample.com/app/store\t0.012s"),
        ToolCalled("c5", "shell", "git status --short", at=19.0),
        ToolReturned("c5", "r5", 20.0, ok=True, output=""),
        ToolCalled("c6", "shell", "git status --short", at=21.0),
        ToolReturned("c6", "r6", 22.0, ok=True, output=""),
    ])
    session = builder.session_episode()
    assert [c.target for c in session.calls] == ["go test ./...", "cat go.mod", "go mod tidy", "go test ./...",
                                                 "git status --short"]  # twice in a row: once
    assert session.text().count("go test ./...") == 1  # what is embedded names each call once
    (error,) = [e for e in builder.episodes() if isinstance(e, ErrorEpisode)]
    met = Judgement(bytes(32), error.uid, "confirmed", error.at)
    judged = fix_judgement(met, Fix("Bash", "go test", "go mod tidy"), 0.0,
                           sessions_by_uid([session, error], 1000.0))
    assert judged.how == FIX_CONFIRMED


def _shouted_reply_after(openers: list[str]) -> list:
    """The person's messages, each answered by the agent, then a reply in capitals to its claim."""
    turns: list = [SessionSeen(session="s-caps", project="/home/dev/vault", at=1.0)]
    for n, text in enumerate(openers):
        turns += [PersonSaid(f"p{n}", 2.0 + 2 * n, text), AgentSaid(3.0 + 2 * n, "Understood. I will proceed.")]
    turns += [AgentSaid(40.0, "Done: the report is written to reports/levelset.md."),
              PersonSaid("last", 41.0, "SO WHO WILL READ THE REPORT THERE")]
    return turns


def test_capitals_are_a_raised_voice_only_from_a_person_who_does_not_write_in_them():
    calm = _run(_shouted_reply_after(["please write the levelset report", "use the usual template", "thanks, go on"]))
    habit = _run(_shouted_reply_after(["PING", "RUN THE LEVELSET PROTOCOL", "ECHO: TRIUNE"]))
    assert [e.uid for e in calm.episodes() if isinstance(e, CorrectionEpisode)] == ["last"]
    assert [e for e in habit.episodes() if isinstance(e, CorrectionEpisode)] == []
    assert BuildState.from_json(json.loads(json.dumps(habit.snapshot().to_json()))).person_shouted == 4


def test_a_claim_of_done_said_not_to_hold_in_any_language_keeps_the_failure_open_for_its_fix():
    # The agent claimed the build works; the person says it is still the same (in Chinese: no English
    # correction phrase): what the agent does next is still the build's fix.
    turns = [
        SessionSeen(session="s1", project="/home/dev/src/app", at=10.0),
        PersonSaid("p1", 10.0, "build the site"),
        ToolCalled("c1", "shell", "npm run build", at=11.0),
        ToolReturned("c1", "r1", 12.0, ok=False,
                     output="Exit code 1\nError: Cannot find module 'vite'\nRequire stack:\n- /home/dev/src/app/build.js"),
        AgentSaid(13.0, "Done: the build works now."),
        PersonSaid("p2", 14.0, "还是一样"),
        ToolCalled("c2", "shell", "npm install vite", at=15.0),
        ToolReturned("c2", "r2", 16.0, ok=True, output=""),
        ToolCalled("c3", "shell", "npm run build", at=17.0),
        ToolReturned("c3", "r3", 18.0, ok=True, output=""),
    ]
    (error,) = [e for e in _run(turns).episodes() if isinstance(e, ErrorEpisode)]
    assert error.resolution is not None and error.resolution.command == "npm install vite"
