"""The one episode builder: a stream of turns (`commons.ingest.turns`) in, episodes out.

Every agent's reader feeds the same builder, so what an episode means is decided once:

- `ErrorEpisode` per failed tool call: the line that says what failed and the sub-command it
  belongs to (`commons.core.learning.failure`), the exit code, and what resolved it
  (`commons.core.learning.evidence`: a retry that succeeded). A fix shows only in later calls, possibly in a later read of
  a growing transcript: the error episode is then emitted again, same uid, with its resolution
  (the store replaces by kind and uid). Until the person speaks again or the horizon passes, a
  failure waits in the state for its resolution.
- `CorrectionEpisode` per message in which the person pushed back on the agent's last turn (rules in
  `corrections.py`: from the structure, in any language) and per rejected tool call that carried the
  person's words; each with what the agent had said and the command it had run.
- `SessionEpisode`: the person's first requests, tool counts, the tool calls, the last words.

The builder's state (`BuildState`) is small and bounded whatever the session's length, and
serialisable, so a reader can stop after any turn and go on later from the saved state.

Privacy door: every text an episode carries (failure line, resolution, the person's words, the
agent's words, the session's requests and last words, tool targets) is scrubbed here, when it is
made (`commons.core.policy.scrubber`), and quotes are cut *after* scrubbing, so a cut never halves a key.
Only what the state needs for matching later calls stays raw (the pending calls and open
failures), local like the archived stream.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from dataclasses import dataclass, replace
from typing import Any

from commons.core.learning import CorrectionEpisode, Episode, ErrorEpisode, SessionEpisode, ToolCall
from commons.core.learning import attribute, failure_line, not_a_failure
from commons.core.learning import OpenFailure, Resolution, Resolved, advance, goal_of, named_fix, opened
from commons.core.learning import SHELL_TOOLS
from commons.core.policy import clip, cut, scrub
from commons.ingest.corrections import (
    AgentTurn, asks, claims_done, contradicts, corrects, is_correction, only_thanks, shouts_as_a_habit, writes_in_capitals,
)  # fmt: skip
from commons.ingest.turns import (AgentSaid, PersonInterrupted, PersonSaid, SessionSeen, ToolCalled, ToolRejected,
                                  ToolReturned, Turn)

# Bounds that keep the state small whatever the session's length.
MAX_ASKED = 3  # first requests kept
MAX_CALLS = 200  # (tool, target) calls kept for the session episode, in order (a call run twice in a row once)
MAX_PENDING = 256  # tool calls awaiting their result; older ones are forgotten
MAX_SEEN = 512  # recently seen tool-call ids (a split or repeated message is counted once)
ASKED_CHARS = 500
SAID_CHARS = 1000
ENDED_CHARS = 1000
PRECEDING_CHARS = 500
SAID_KEPT = 300  # characters of the agent's last words kept beside the next step
WORDS_CHARS = 4000  # of the agent's last words (scrubbed), what the person's reply may quote back
HINT_CHARS = 600  # characters of a failed output's head kept to tell which step it points at
OUTPUT_ENDS = 6000  # characters of a failed output's head and of its tail that are searched


@dataclass(frozen=True)
class BuildState:
    """Everything the builder must remember between two turns."""

    hint: str = ""  # session name to use if the stream never states one
    session: str = ""
    agent: str = ""
    project: str = ""
    sidechain: bool = False
    at: float | None = None
    ended_at: float | None = None
    asked: tuple[str, ...] = ()
    person_messages: int = 0
    person_shouted: int = 0  # of those, the messages that had words in capitals: the person's habit
    tool_counts: tuple[tuple[str, int], ...] = ()
    calls: tuple[ToolCall, ...] = ()
    ended: str = ""
    turn_text: str = ""  # the agent's last words since the person last spoke
    turn_words: str = ""  # more of those words (WORDS_CHARS): what the person's reply may quote back
    turn_call: str = ""  # the agent's last tool call since the person last spoke
    turn_done: bool = False  # the agent's last words since the person spoke claimed the work done
    turn_asked: bool = False  # those words ended on a question to the person
    interrupted: bool = False  # the person stopped the agent since they last spoke
    claim_stands: bool = False  # the agent claimed done, the person only thanked it, and it has called nothing since
    pending: tuple[tuple[str, str, str, str], ...] = ()  # (call id, tool, target, detail), oldest first
    open_failures: tuple[OpenFailure, ...] = ()  # failed calls still awaiting a resolution
    open_errors: tuple[ErrorEpisode, ...] = ()  # their episodes, to emit again once resolved
    seen: tuple[str, ...] = ()  # call ids (and "!"+id for reported errors), oldest first
    said: str = ""  # the agent's last words, raw and cut: what it said it was doing before a step

    def to_json(self) -> dict[str, Any]:
        return {
            "hint": self.hint, "session": self.session, "agent": self.agent, "project": self.project,
            "sidechain": self.sidechain, "at": self.at, "ended_at": self.ended_at, "asked": list(self.asked),
            "person_messages": self.person_messages, "person_shouted": self.person_shouted, "tool_counts": [list(p) for p in self.tool_counts],
            "calls": [[c.tool, c.target] for c in self.calls], "ended": self.ended,
            "turn_text": self.turn_text, "turn_call": self.turn_call, "turn_done": self.turn_done,
            "turn_asked": self.turn_asked, "interrupted": self.interrupted, "turn_words": self.turn_words,
            "claim_stands": self.claim_stands,
            "pending": [list(p) for p in self.pending], "open_failures": [f.to_json() for f in self.open_failures],
            "open_errors": [[e.session, e.uid, e.at, e.tool, e.target, e.failure, e.exit_code, e.command]
                            for e in self.open_errors],
            "seen": list(self.seen), "said": self.said,
        }  # fmt: skip

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> BuildState:
        """Raises ValueError, TypeError or KeyError on a body this version did not write."""
        known = {"hint", "session", "agent", "project", "sidechain", "at", "ended_at", "asked", "person_messages",
                 "tool_counts", "calls", "ended", "turn_text", "turn_call", "turn_done", "turn_asked", "interrupted",
                 "pending",
                 "open_failures", "open_errors", "seen", "said"}  # fmt: skip
        later = {"person_shouted", "turn_words", "claim_stands"}  # fields added since: a state written before them has none
        if not known <= set(body) <= known | later:
            raise KeyError(f"build state fields differ: {sorted((set(body) - later) ^ known)}")
        return cls(
            hint=str(body["hint"]), session=str(body["session"]), agent=str(body["agent"]),
            project=str(body["project"]), sidechain=bool(body["sidechain"]),
            at=None if body["at"] is None else float(body["at"]),
            ended_at=None if body["ended_at"] is None else float(body["ended_at"]),
            asked=tuple(str(a) for a in body["asked"]), person_messages=int(body["person_messages"]),
            person_shouted=int(body.get("person_shouted", 0)),
            tool_counts=tuple((str(t), int(n)) for t, n in body["tool_counts"]),
            calls=tuple(ToolCall(str(t), str(g)) for t, g in body["calls"]), ended=str(body["ended"]),
            turn_text=str(body["turn_text"]), turn_call=str(body["turn_call"]), turn_done=bool(body["turn_done"]),
            turn_asked=bool(body["turn_asked"]), interrupted=bool(body["interrupted"]),
            turn_words=str(body.get("turn_words", "")), claim_stands=bool(body.get("claim_stands", False)),
            pending=tuple((str(i), str(t), str(g), str(d)) for i, t, g, d in body["pending"]),
            open_failures=tuple(OpenFailure.from_json(row) for row in body["open_failures"]),
            open_errors=tuple(
                ErrorEpisode(session=str(s), uid=str(u), at=float(a), tool=str(t), target=str(g), failure=str(f),
                             exit_code=None if x is None else int(x), command=str(c))
                for s, u, a, t, g, f, x, c in body["open_errors"]),
            seen=tuple(str(s) for s in body["seen"]), said=str(body["said"]),
        )  # fmt: skip


class EpisodeBuilder:
    """The mutable working copy of a `BuildState` while a batch of turns is fed."""

    def __init__(self, s: BuildState) -> None:
        self.s = s
        self.session, self.agent, self.project, self.sidechain = s.session, s.agent, s.project, s.sidechain
        self.at, self.ended_at = s.at, s.ended_at
        self.asked = list(s.asked)
        self.person_messages, self.person_shouted = s.person_messages, s.person_shouted
        self.counts = Counter(dict(s.tool_counts))
        self.calls = list(s.calls)
        self.scrubbed = {c: c for c in s.calls}  # raw call → its scrubbed form (a repeat costs no scrub)
        self.turn_call, self.interrupted = s.turn_call, s.interrupted
        self.claim_stands = s.claim_stands
        self._ended, self._turn_text, self._turn_done, self._turn_asked = s.ended, s.turn_text, s.turn_done, s.turn_asked
        self._turn_words = s.turn_words
        # The agent's last words, raw, while newer than the field each stands for (see `ended`).
        self._said_ended: str | None = None
        self._said_turn: str | None = None
        self._said_done: str | None = None
        self._said_asked: str | None = None
        self._said_words: str | None = None
        self._scrubbed_said: tuple[str, str] = ("", "")  # (raw, scrubbed): one scrub for both cuts
        self.pending: OrderedDict[str, tuple[str, str, str]] = OrderedDict((i, (t, g, d)) for i, t, g, d in s.pending)
        self.open_failures = s.open_failures
        self.open_errors = {e.uid: e for e in s.open_errors}
        self.seen: OrderedDict[str, None] = OrderedDict.fromkeys(s.seen)
        self.said = s.said
        self.out: list[Episode] = []

    def feed(self, turn: Turn) -> None:
        if isinstance(turn, SessionSeen):
            self._seen_session(turn)
        elif isinstance(turn, ToolReturned):
            self._returned(turn)
        elif isinstance(turn, ToolCalled):
            self._called(turn)
        elif isinstance(turn, AgentSaid):
            text = turn.text.strip()
            if text:
                self._said_ended = self._said_turn = self._said_done = self._said_asked = self._said_words = text
                self.said = text[-SAID_KEPT:]
        elif isinstance(turn, PersonSaid):
            self._person(turn)
        elif isinstance(turn, ToolRejected):
            self._rejected(turn)
        elif isinstance(turn, PersonInterrupted):
            self.interrupted = True

    # -- the agent's last words ------------------------------------------------------------
    # An agent says many things between two reads of its words (the person's next message, a
    # rejection, the end of a batch), and each replaces the one before: they are scrubbed, cut and
    # asked whether they claim the work done when read, not when said. The same pure functions of
    # the same last words give the same fields; most of an agent's messages then cost nothing.

    @property
    def ended(self) -> str:
        if self._said_ended is not None:
            self._ended, self._said_ended = cut(self._scrub_said(self._said_ended), ENDED_CHARS), None
        return self._ended

    @property
    def turn_text(self) -> str:
        if self._said_turn is not None:
            self._turn_text, self._said_turn = cut(self._scrub_said(self._said_turn), PRECEDING_CHARS), None
        return self._turn_text

    @turn_text.setter
    def turn_text(self, value: str) -> None:
        self._turn_text, self._said_turn = value, None

    @property
    def turn_words(self) -> str:
        if self._said_words is not None:
            self._turn_words, self._said_words = cut(self._scrub_said(self._said_words), WORDS_CHARS), None
        return self._turn_words

    @turn_words.setter
    def turn_words(self, value: str) -> None:
        self._turn_words, self._said_words = value, None

    @property
    def turn_done(self) -> bool:
        if self._said_done is not None:
            self._turn_done, self._said_done = claims_done(self._said_done), None
        return self._turn_done

    @turn_done.setter
    def turn_done(self, value: bool) -> None:
        self._turn_done, self._said_done = value, None

    @property
    def turn_asked(self) -> bool:
        if self._said_asked is not None:
            self._turn_asked, self._said_asked = asks(self._said_asked), None
        return self._turn_asked

    @turn_asked.setter
    def turn_asked(self, value: bool) -> None:
        self._turn_asked, self._said_asked = value, None

    def _scrub_said(self, text: str) -> str:
        if self._scrubbed_said[0] is not text:
            self._scrubbed_said = (text, scrub(text))
        return self._scrubbed_said[1]

    # -- what each turn does -----------------------------------------------------------------

    def _seen_session(self, turn: SessionSeen) -> None:
        if not self.session and turn.session:
            self.session, self.sidechain, self.agent = turn.session, turn.sidechain, turn.agent
        if not self.project and turn.project:
            self.project = turn.project
        if turn.at is not None:
            if self.at is None:
                self.at = turn.at
            if self.ended_at is None or turn.at > self.ended_at:
                self.ended_at = turn.at

    def _called(self, turn: ToolCalled) -> None:
        if turn.use_id in self.seen:  # the same call written twice (a message split or replayed)
            return
        self._remember(turn.use_id)
        self.claim_stands = False
        self.counts[turn.tool] += 1
        call = ToolCall(turn.tool, turn.target)
        if len(self.calls) < MAX_CALLS:
            clean = self.scrubbed.get(call)
            if clean is None:
                clean = self.scrubbed[call] = ToolCall(turn.tool, scrub(turn.target))
            # In order, and a step run again after others is listed again: whether a fix worked is
            # read from the calls (the failing step, the fix, the step again: issue #26). The same
            # call run twice in a row is listed once.
            if not self.calls or self.calls[-1] != clean:
                self.calls.append(clean)
        self.pending[turn.use_id] = (turn.tool, turn.target, turn.detail)
        while len(self.pending) > MAX_PENDING:
            self.pending.popitem(last=False)
        self.turn_call = f"{turn.tool} {turn.target}".strip()

    def hand_over(self, use_id: str, to: str) -> bool:
        """The pending call `use_id` now awaits its result under `to` (a program that keeps running
        past its call: its exit comes with a later call polling it). False when none is pending."""
        entry = self.pending.pop(use_id, None)
        if entry is None:
            return False
        self.pending[to] = entry
        return True

    def note(self, key: str, value: str) -> None:
        """Keep `value` under `key` (never a call id) until `take_note`: what a reader must know of a
        call between its line and its result's, which a later read of the transcript may bring.
        Kept with the pending calls, and as bounded."""
        self.pending[key] = ("", value, "")
        while len(self.pending) > MAX_PENDING:
            self.pending.popitem(last=False)

    def take_note(self, key: str) -> str | None:
        entry = self.pending.pop(key, None)
        return None if entry is None else entry[1]

    def _remember(self, key: str) -> None:
        self.seen[key] = None
        while len(self.seen) > MAX_SEEN:
            self.seen.popitem(last=False)

    def _person(self, turn: PersonSaid) -> None:
        text = turn.text
        uid = turn.uid or f"{self.session}#{self.person_messages}"
        # The same message sent again (a retry after an error, a re-sent first request) answers no new turn.
        resent = cut(scrub(text), ASKED_CHARS) in self.asked
        # A claim of done still stands when the person only thanked the agent and it called nothing since:
        # "thanks" → "you're welcome" → "it fails with …" contradicts the claim before the thanks.
        claimed = self.turn_done or self.claim_stands and not self.turn_call
        # A subagent's "user" words are its parent agent's prompts (a Claude Code sidechain, a Gemini
        # subagent chat): the person is not speaking there, and corrects nothing.
        corrected = not resent and not self.sidechain and corrects(text, AgentTurn(said=self.turn_text, acted=self.turn_call,
                                                            claimed_done=claimed, asked=self.turn_asked,
                                                            words=self.turn_words,
                                                            interrupted=self.interrupted,
                                                            first=self.person_messages == 0,
                                                            shouts_as_a_habit=shouts_as_a_habit(
                                                                self.person_shouted, self.person_messages)))
        # Found by the structure alone after a claim of done: what the agent claimed, not a command, was wrong.
        after_done = corrected and claimed and not is_correction(text)
        clean = ""
        if corrected:
            clean = scrub(text)
            command = scrub(self.turn_call)
            self.out.append(
                CorrectionEpisode(
                    session=self._session_id(), uid=uid, at=self._at(turn.at), said=cut(clean, SAID_CHARS),
                    preceding=self.turn_text or command, command=command, after_done=after_done,
                )  # fmt: skip
            )
        if len(self.asked) < MAX_ASKED:
            self.asked.append(cut(clean or scrub(text), ASKED_CHARS))
        self.person_messages += 1
        self.person_shouted += writes_in_capitals(text)
        self.claim_stands = claimed and only_thanks(text)
        self.turn_text = self.turn_call = self.turn_words = ""
        self.turn_done = self.turn_asked = self.interrupted = False
        # The person asked for something: the task moved on, and what follows no longer resolves
        # earlier failures. A correction in so many words steers the same task ("set asyncio_mode in
        # pyproject.toml instead"), as does "it still fails" after a claim of done: what the agent does
        # next may still be what fixes them. A redirect found by the structure ("focus on the
        # backend") moves the task on: kept open past one, failures took the next task for their fix
        # (`make lessons-report`: fix precision 81% against 84%).
        if not (is_correction(text) or claimed and contradicts(text)):
            self.open_failures = ()
            self.open_errors = {}

    def _rejected(self, turn: ToolRejected) -> None:
        tool, target, _ = self.pending.pop(turn.use_id, ("", "", ""))
        if not turn.words:
            return
        rejected = scrub(f"{tool} {target}".strip())
        self.out.append(
            CorrectionEpisode(
                session=self._session_id(), uid=turn.uid or turn.use_id, at=self._at(turn.at),
                said=clip(turn.words, SAID_CHARS), preceding=rejected or self.turn_text or scrub(self.turn_call),
                via_rejection=True, command=rejected,
            )  # fmt: skip
        )
        self.turn_text = self.turn_call = self.turn_words = ""

    def _returned(self, turn: ToolReturned) -> None:
        tool, target, detail = self.pending.pop(turn.use_id, ("", "", ""))
        if turn.ok:
            if tool:
                self._resolve(tool, target, detail, turn.shown)
            return
        key = "!" + turn.use_id
        if key in self.seen:
            return
        self._remember(key)
        text = _ends(turn.output)
        tool = tool or "unknown"
        command = attribute(target, text) if tool.lower() in SHELL_TOOLS else ""
        failure, exit_code = failure_line(text, command)  # scrubbed, then cut, by failure_line itself
        if not_a_failure(tool, command or target, text, failure, call=target):
            # Refused, interrupted, a sibling's cascade, a probe that answered "no", or a bare exit
            # code: it stays in the archive and makes no error episode (nor a failure to fix).
            return
        self.open_failures, resolved = advance(self.open_failures, tool, target, ok=False, detail=detail,
                                               said=self.said, failure=failure)
        self._emit_resolved(resolved)
        episode = ErrorEpisode(
            session=self._session_id(), uid=turn.use_id, at=self._at(turn.at), tool=tool, target=scrub(target),
            failure=failure, exit_code=exit_code, command=scrub(command) if command != target else "",
        )  # fmt: skip
        self.out.append(episode)
        # What the error says (its line, the fix it names, its first lines): a step it names is
        # preferred as the fix. Raw, like the rest of the state.
        hint = "\n".join(filter(None, (failure, named_fix(text), text[:HINT_CHARS])))
        self.open_failures = opened(self.open_failures,
                                    OpenFailure(turn.use_id, tool, goal_of(target, command) if command else target,
                                                hint, detail=detail, target=target, failure=failure))
        self.open_errors[turn.use_id] = episode

    def _resolve(self, tool: str, target: str, detail: str, shown: str | None = None) -> None:
        """A call succeeded: emit again, with their resolution, the open failures it resolved."""
        if not self.open_failures:
            return
        self.open_failures, resolved = advance(self.open_failures, tool, target, ok=True, detail=detail,
                                               said=self.said, output=shown)
        self._emit_resolved(resolved)

    def _emit_resolved(self, resolved: tuple[Resolved, ...]) -> None:
        for item in resolved:
            episode = self.open_errors.pop(item.uid, None)
            if episode is not None:
                self.out.append(replace(episode, resolution=_scrubbed(item.resolution)))
        self._drop_closed()

    def _drop_closed(self) -> None:
        live = {f.uid for f in self.open_failures}
        self.open_errors = {uid: e for uid, e in self.open_errors.items() if uid in live}

    # -- results -----------------------------------------------------------------------------

    def _session_id(self) -> str:
        return self.session or self.s.hint

    def _at(self, ts: float | None) -> float:
        if ts is not None:
            return ts
        return self.ended_at if self.ended_at is not None else 0.0

    def episodes(self) -> tuple[Episode, ...]:
        """The errors and corrections of this batch, an error resolved in it once (its last form,
        in its first place)."""
        latest: dict[tuple[str, str], Episode] = {}
        for episode in self.out:
            latest[(episode.kind.value, episode.uid)] = episode
        return tuple(latest.values())

    def session_episode(self) -> SessionEpisode | None:
        session = self._session_id()
        if self.at is None or not session:
            return None
        return SessionEpisode(
            session=session,
            uid=f"{session}:{self.agent}" if self.agent else session,
            at=self.at,
            ended_at=self.ended_at if self.ended_at is not None else self.at,
            asked=tuple(self.asked),
            tool_counts=tuple(sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0]))),
            ended=self.ended,
            calls=tuple(self.calls),
            project=self.project,
            sidechain=self.sidechain,
        )

    def snapshot(self) -> BuildState:
        return replace(
            self.s,
            session=self.session, agent=self.agent, project=self.project, sidechain=self.sidechain,
            at=self.at, ended_at=self.ended_at, asked=tuple(self.asked),
            person_messages=self.person_messages, person_shouted=self.person_shouted,
            tool_counts=tuple(sorted(self.counts.items())), calls=tuple(self.calls),
            ended=self.ended, turn_text=self.turn_text, turn_call=self.turn_call, turn_done=self.turn_done,
            turn_asked=self.turn_asked, interrupted=self.interrupted, turn_words=self.turn_words,
            claim_stands=self.claim_stands,
            pending=tuple((i, t, g, d) for i, (t, g, d) in self.pending.items()),
            open_failures=self.open_failures, open_errors=tuple(self.open_errors.values()),
            seen=tuple(self.seen), said=self.said,
        )  # fmt: skip


def _scrubbed(resolution: Resolution | None) -> Resolution | None:
    """A resolution as an episode carries it: the command that worked and the steps, scrubbed."""
    if resolution is None:
        return None
    return replace(resolution, command=scrub(resolution.command), retry=scrub(resolution.retry),
                   refuted=tuple(map(scrub, resolution.refuted)))


def _ends(text: str) -> str:
    """A long output's head and tail: a failure is stated near one end (the error first, or the
    summary last), and the middle of a 30 KB log would only cost time."""
    if len(text) <= 2 * OUTPUT_ENDS:
        return text
    return text[:OUTPUT_ENDS] + "\n" + text[-OUTPUT_ENDS:]
