"""The nap: a session's end learns, at once, what needs no night (``commons.core.learning.nap``).

``commons hook session-end`` ingests the ended session and calls :func:`nap`: the store's lessons
and live surprises go to the core's nap, what it kept is written (vetoes respected, as at night),
and the memory is rendered again, so the next session of the same day reads the lesson. The night
still runs every pass; a nap records no sleep run, so it never stands in for a missed night.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import partial

import numpy as np
import trio

from commons.core.learning import run_nap
from commons.core.embedding import embed_many
from commons.core.learning import EpisodeKind
from commons.node import rendering, review
from commons.node.context import NodeContext
from commons.node.projects import project_names
from commons.node.rendering import RenderSummary
from commons.store import episodes as episode_store
from commons.store import lessons as ls
from commons.store.db import Store



@dataclass(frozen=True)
class NapReport:
    learned: tuple[tuple[str, str], ...]  # (lesson id, text) of lessons learned now
    joined: tuple[tuple[str, str], ...]  # (lesson id, text) of lessons that absorbed surprises
    suppressed: tuple[str, ...]  # learned again from vetoed content: stored as vetoed
    waiting: int  # surprises left for the night
    render: RenderSummary | None  # None when nothing changed
    failed_here: tuple[str, ...] = ()  # common lessons the session proved wrong here: no longer rendered

    def to_json(self) -> dict:
        return {"learned": [{"id": i, "text": t} for i, t in self.learned],
                "joined": [{"id": i, "text": t} for i, t in self.joined],
                "suppressed": list(self.suppressed), "waiting": self.waiting, "failed_here": list(self.failed_here),
                "render": self.render.to_json() if self.render else None}


async def nap(store: Store, node: NodeContext, now: float) -> NapReport:
    stored = await ls.load_lessons(store)
    surprises = [s.episode for s in await episode_store.load_episodes(
        store, kinds=[EpisodeKind.ERROR, EpisodeKind.CORRECTION]) if s.episode.at <= now]
    names = await trio.to_thread.run_sync(project_names, await episode_store.session_workdirs(store))
    # What the commons met elsewhere, as the night takes it (``commons.node.sleep``): a failure met
    # once in this session that a received lesson predicts is a lesson for the day's next session.
    elsewhere = await review.met_elsewhere(store, node, now)
    result = await trio.to_thread.run_sync(partial(
        run_nap, [s.lesson for s in stored], surprises, now, node.sleep, hash_episode=node.hash_episode,
        write_text=node.write_text, project_names=names, elsewhere=elsewhere))
    vetoed_ids, vetoed_keys = await ls.veto_keys(store)
    suppressed = {lesson.id for lesson in result.learned
                  if lesson.id in vetoed_ids or ls.content_key(lesson.kind, lesson.text) in vetoed_keys}
    items = [(lesson, ls.VETOED if lesson.id in suppressed else "active") for lesson in result.lessons]
    # A common lesson the session just proved wrong here stops rendering before the next session.
    failed = tuple(r.lesson.hex() for r in await review.after_nap(store, node, now))
    if not items and not failed:
        return NapReport((), (), (), result.waiting, None)
    if items:
        vectors = await trio.to_thread.run_sync(embed_many, [ls.recall_text(lesson) for lesson, _ in items])
        async with store.transaction():
            await ls.put_lessons(store, items, np.asarray(vectors), now)
    rendered = await rendering.render(store, node, now)
    return NapReport(
        learned=tuple((lesson.id, lesson.text) for lesson in result.learned if lesson.id not in suppressed),
        joined=tuple(dict.fromkeys((e.lesson.id, e.lesson.text) for e in result.joined)),
        suppressed=tuple(sorted(suppressed)), waiting=result.waiting, render=rendered, failed_here=failed)
