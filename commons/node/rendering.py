"""The memory the agent reads, rendered from the store: per project, own lessons, common lessons.

What goes where is decided here; the files are written by the node's render target
(``NodeContext.target``, a module of ``commons.render``: see ``commons/render/target.py``). A
lesson knows its projects through its episodes: each episode's session ran in a working directory
(the session episode's ``project``), which the target maps to a project (Claude Code: the main git
root). Then, for each destination the target names:

* ``project`` layer: the *local* lessons learned in that project's sessions, and only there;
* ``own`` layer: this node's shared-scope lessons, whatever project taught them (and a local
  lesson that no session or project places);
* ``common`` layer: lessons common at this node (never candidates).

A destination of no project (the plain folder) shows every own lesson in ``own``, as before.
Files the person deleted, in any folder, are vetoes (``detect_deleted``), read before every render
and every night.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import trio

from commons.core.learning import Lesson, lesson_detail, lesson_resolved, names_project
from commons.core.records import Lesson as LessonRecord
from commons.clock import format_day
from commons.core.records import Scope, day_of
from commons.core.policy import Admitted, admit, dangerous_advice, scrub, scrub_json
from commons.node import agent_files, review
from commons.node.context import NodeContext
from commons.node.projects import project_names
from commons.render import memory_folder as renderer
from commons.render.target import Destination
from commons.store import episodes as episode_store
from commons.store import lessons as ls
from commons.store import records as record_store
from commons.store.db import Store

log = logging.getLogger("commons.render")

async def detect_deleted(store: Store, node: NodeContext, now: float) -> list[str]:
    """Record a veto for every rendered lesson file the person deleted, in any folder; returns their ids."""
    by_folder: dict[str, list[tuple[str, str]]] = {}
    for r in await ls.rendered(store):
        by_folder.setdefault(r.folder, []).append((r.lesson_id, r.file))
    gone = list(dict.fromkeys(lid for folder, previous in sorted(by_folder.items())
                              for lid in renderer.deleted_by_person(Path(folder), previous)))
    if gone:
        found = {s.lesson.id: (s.lesson.kind, s.lesson.text) for s in await ls.load_lessons(store, ids=gone)}
        for lid in gone:  # a common lesson's file is named after its record: veto it the same way
            if lid not in found and len(lid) == 64:
                signed = await record_store.get(store, bytes.fromhex(lid))
                if signed is not None and isinstance(signed.record, LessonRecord):
                    found[lid] = (signed.record.kind, signed.record.text)
        async with store.transaction():
            await ls.add_vetoes(store, [(lid, ls.content_key(*found[lid]), found[lid][1])
                                        for lid in gone if lid in found], "file deleted", now)
    return gone


@dataclass(frozen=True)
class FolderRender:
    """What one render wrote in one destination."""

    folder: Path
    project: str  # the project root the folder is the memory of; "" for a folder of every project
    rendered: tuple[tuple[str, int], ...]  # per layer: lessons written
    left_out: tuple[tuple[str, int], ...]  # per layer: lessons over MEMORY.md's budget
    memory_lines: int
    memory_bytes: int

    def to_json(self) -> dict:
        return {"folder": str(self.folder), "project": self.project or None, "rendered": dict(self.rendered),
                "left_out": dict(self.left_out), "memory_lines": self.memory_lines,
                "memory_bytes": self.memory_bytes}


@dataclass(frozen=True)
class RenderSummary:
    """What one render did, over every destination of the target."""

    target: str
    folders: tuple[FolderRender, ...]
    rendered: int  # lesson files written (every layer, every folder)
    removed: tuple[str, ...]  # files removed: their lessons left a folder
    unsafe_skipped: tuple[str, ...]  # lessons whose text read as instructions: not written
    vetoed_deleted_files: tuple[str, ...]  # lessons whose files the person deleted: vetoed now
    agent_files: tuple[agent_files.AgentRender, ...] = ()  # Codex's AGENTS.md, Gemini's GEMINI.md, if set up
    repaired: tuple[str, ...] = ()  # damaged managed sections healed, in words (every file)

    @property
    def folder(self) -> Path | None:
        """The one folder written, or the first of several; None when no project has a memory."""
        return self.folders[0].folder if self.folders else None

    @property
    def left_out(self) -> tuple[tuple[str, int], ...]:
        total: dict[str, int] = {}
        for f in self.folders:
            for layer, n in f.left_out:
                total[layer] = total.get(layer, 0) + n
        return tuple(total.items())

    @property
    def memory_lines(self) -> int:
        return max((f.memory_lines for f in self.folders), default=0)

    @property
    def memory_bytes(self) -> int:
        return max((f.memory_bytes for f in self.folders), default=0)

    def to_json(self) -> dict:
        return {"target": self.target, "folder": str(self.folder) if self.folder else None,
                "folders": [f.to_json() for f in self.folders], "rendered": self.rendered,
                "removed": list(self.removed), "unsafe_skipped": list(self.unsafe_skipped),
                "left_out": dict(self.left_out), "vetoed_deleted_files": list(self.vetoed_deleted_files),
                "memory_lines": self.memory_lines, "memory_bytes": self.memory_bytes,
                "agent_files": [a.to_json() for a in self.agent_files], "repaired": list(self.repaired)}


def strength_now(lesson: Lesson, now: float, node: NodeContext) -> float:
    return lesson.strength_now(now, node.sleep.half_life_days)


async def lesson_projects(store: Store, node: NodeContext, lessons: Sequence[Lesson]) -> dict[str, frozenset[str]]:
    """Lesson id → the projects (target keys) its episodes' sessions ran in; empty when unknown."""
    workdirs = await episode_store.workdirs_of(store, [uid for lesson in lessons for uid in lesson.episodes])
    written = await ls.written_in(store, [lesson.id for lesson in lessons if not lesson.episodes])
    found = {}
    for lesson in lessons:
        places = [workdirs[uid] for uid in lesson.episodes if uid in workdirs]
        places += [written[lesson.id]] if lesson.id in written else []
        found[lesson.id] = frozenset(k for k in map(node.target.project_of, places) if k)
    return found


def _foreign(dest: Destination, names_of: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The names of the person's other projects that are not also this one's."""
    mine = set(names_of.get(dest.project, ()))
    return tuple(dict.fromkeys(n for key, names in names_of.items() if key != dest.project
                               for n in names if n not in mine))


def _layers(dest: Destination, folder_has: set[str], own: Sequence[tuple[Lesson, renderer.RenderItem]],
            projects: dict[str, frozenset[str]], common: Sequence[renderer.RenderItem],
            names_of: dict[str, tuple[str, ...]] | None = None) -> list[renderer.Layer]:
    if not dest.project:
        layers = [renderer.Layer("own", [item for _, item in own])]
    else:
        local = [item for lesson, item in own if lesson.scope is Scope.LOCAL and dest.project in projects[lesson.id]]
        # A local lesson no session places (one written by hand before lessons had projects) is
        # shown everywhere rather than nowhere: what the person wrote is never silently dropped.
        shared = [item for lesson, item in own if lesson.scope is not Scope.LOCAL or not projects[lesson.id]]
        # ...except where it names another of the person's projects: a project's names stay in it.
        foreign = _foreign(dest, names_of or {})
        if foreign:
            shared = [item for item in shared if not names_project(item.text, foreign)]
            common = [item for item in common if not names_project(item.text, foreign)]
        layers = [renderer.Layer("project", local), renderer.Layer("own", shared)]
    if common or "common" in folder_has:  # an emptied section is rewritten, not left stale
        layers.append(renderer.Layer("common", common))
    return layers


def _names_by_project(node: NodeContext, workdirs: Sequence[str]) -> dict[str, tuple[str, ...]]:
    by_project: dict[str, list[str]] = {}
    for w in workdirs:
        key = node.target.project_of(w)
        if key:
            by_project.setdefault(key, []).append(w)
    return {key: project_names(ws) for key, ws in by_project.items()}


def _with_risk(lesson: Lesson) -> str:
    """A lesson's text as rendered: a text stored before its fix was known to be dangerous (it
    still names the step as what worked; `commons rebuild` rewrites it) says the risk after it."""
    danger = lesson.fix.danger if lesson.fix is not None else None
    if danger is None or dangerous_advice(lesson.text) is None:
        return lesson.text
    return f"{lesson.text} That step {danger.kind.value} (rule {danger.rule}): {danger.risk}."


def _scrubbed(item: renderer.RenderItem) -> renderer.RenderItem:
    # The door policy's text (visible characters, one line, scrubbed); a text it refuses is left
    # as it is, for the target to refuse and report among the render's `unsafe`.
    verdict = admit(item.text)
    prediction = scrub_json(dict(item.prediction)) if item.prediction is not None else None
    return replace(item, text=verdict.text if isinstance(verdict, Admitted) else item.text, prediction=prediction,
                   detail=tuple(map(scrub, item.detail)))


def _seen_since(lesson: Lesson, episodes: Sequence, elsewhere: int | None) -> tuple[str, ...]:
    """The line that opens an own lesson's account when other agents met its failure later than
    this node did (a confirmation of its published record, observed that day): its file would
    otherwise say only when this node last met it, and an agent reading an old day there may take
    the lesson for stale and try the command plainly."""
    if elsewhere is None or not episodes or day_of(max(e.at for e in episodes)) >= elsewhere:
        return ()
    return (f"Its failure last seen on {format_day(elsewhere)}, by another agent.",)


async def render(store: Store, node: NodeContext, now: float) -> RenderSummary:
    """Render every destination of the node's target now (see the module's docstring).

    An own lesson whose record is revoked or superseded is left out; one that a common lesson
    stands for (content dedupe) is shown once, in the common layer, with its confirmations.
    """
    vetoed = await detect_deleted(store, node, now)
    own_rows = [s for s in await ls.load_lessons(store, statuses=["active"]) if s.origin == "own"]
    hidden: set[str] = set()
    common: list[renderer.RenderItem] = []
    seen_elsewhere: dict[bytes, int] = {}
    if node.trust is not None:
        held = await node.trust.held(store, now)
        seen_elsewhere = review.last_seen_failing(held)
        failed = await review.failed_here(store)
        hidden = review.hidden_own(held, {s.lesson.id: s.record_id for s in own_rows}, failed,
                                   node.trust.policy.required, {s.lesson.id: s.lesson.touched for s in own_rows})
        vetoed_ids, vetoed_keys = await ls.veto_keys(store)
        common = review.common_layer(held, vetoed_ids, vetoed_keys, failed)
    active = [s.lesson for s in own_rows if s.lesson.id not in hidden]
    record_of = {s.lesson.id: s.record_id for s in own_rows}
    predictions = await ls.open_prediction_of(store, [lesson.id for lesson in active])
    made_of = await episode_store.episodes_by_uid(store, [uid for lesson in active for uid in lesson.episodes])
    names = await trio.to_thread.run_sync(project_names, await episode_store.session_workdirs(store))

    def item(lesson: Lesson) -> renderer.RenderItem:
        episodes = [made_of[uid] for uid in lesson.episodes if uid in made_of]
        prediction = predictions.get(lesson.id)
        return renderer.RenderItem(
            id=lesson.id, text=_with_risk(lesson), kind=lesson.kind.value, scope=lesson.scope.value,
            strength=strength_now(lesson, now, node), seen=lesson.seen,
            prediction={"situation": prediction.situation, "outcome": prediction.outcome} if prediction else None,
            detail=(_seen_since(lesson, episodes, seen_elsewhere.get(record_of.get(lesson.id) or b""))
                    + lesson_detail(episodes, names)),
            resolved=not episodes or lesson_resolved(episodes))

    own = [(lesson, item(lesson)) for lesson in active]
    # The last pass before the agent reads it: whatever was stored before a door was scrubbed,
    # or arrived from a peer, leaves this node's memory folders clean.
    own = [(lesson, _scrubbed(item)) for lesson, item in own]
    # A peer's lesson naming a dangerous fix is refused at intake; one held from before that door
    # existed is never shown either.
    common = [_scrubbed(item) for item in common if dangerous_advice(item.text) is None]
    projects = await lesson_projects(store, node, active)
    known = {node.target.project_of(w) for w in await episode_store.session_workdirs(store)}
    known |= {p for keys in projects.values() for p in keys}
    destinations = await trio.to_thread.run_sync(node.target.destinations, sorted(k for k in known if k))
    names_of = await trio.to_thread.run_sync(_names_by_project, node, await episode_store.session_workdirs(store))

    previous = await ls.rendered(store)
    rows: list[ls.Rendered] = []
    folders: list[FolderRender] = []
    removed: list[str] = []
    unsafe: list[str] = []
    repaired: list[str] = []
    for dest in destinations:
        here = [r for r in previous if r.folder == str(dest.folder)]
        has = {name for name in ("project", "own", "common") if renderer.has_section(dest.folder, name)}
        layers = _layers(dest, has, own, projects, common, names_of)
        result = await trio.to_thread.run_sync(partial(node.target.write, dest, layers, [r.file for r in here]))
        since = {r.lesson_id: r.since for r in here}
        rows += [ls.Rendered(lid, layer, str(dest.folder), name, since.get(lid, now), dest.project)
                 for layer, lid, name in result.written]
        per_layer = {layer.name: 0 for layer in layers}
        for layer, _, _ in result.written:
            per_layer[layer] += 1
        folders.append(FolderRender(dest.folder, dest.project, tuple(per_layer.items()),
                                    tuple(dict(result.left_out).items()), result.lines, result.bytes))
        removed += result.removed
        unsafe += [lid for lid in result.unsafe if lid not in unsafe]
        repaired += result.repaired
    async with store.transaction():
        await ls.replace_rendered(store, rows)
    agents = await agent_files.render_all(store, [*(item for _, item in own), *common])
    repaired += [line for a in agents if a.result is not None for line in a.result.repaired]
    for line in repaired:  # the person may wonder why their file changed: the log says
        log.warning("%s", line)
    return RenderSummary(node.target.name, tuple(folders), len(rows), tuple(removed), tuple(unsafe), tuple(vetoed),
                         agents, tuple(repaired))
