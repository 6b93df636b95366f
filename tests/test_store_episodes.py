from commons.core.learning.episode import CorrectionEpisode, EpisodeKind, ErrorEpisode, SessionEpisode, ToolCall
from commons.store import episodes as episode_store
from commons.store.db import Store

SESSION = SessionEpisode(
    session="s1", uid="s1", at=100.0, ended_at=200.0, asked=("make the tests pass",),
    tool_counts=(("Bash", 2),), ended="done", calls=(ToolCall("Bash", "pytest -q"),), project="/p",
)
ERROR = ErrorEpisode(session="s1", uid="toolu_1", at=150.0, tool="Bash", target="pytest -q", failure="E   boom", exit_code=1)
CORRECTION = CorrectionEpisode(session="s1", uid="u9", at=160.0, said="no, use uv", preceding="pip install x")


async def test_episodes_round_trip_through_the_store(aio, tmp_path):
    async with await Store.open(tmp_path / "c.db") as store:
        async with store.transaction():
            new = await episode_store.put_episodes(store, [SESSION, ERROR, CORRECTION], transcript="t", now=1.0)
        loaded = [s.episode for s in await episode_store.load_episodes(store)]
    assert new == 3
    assert loaded == [SESSION, ERROR, CORRECTION]


async def test_session_episode_is_replaced_not_duplicated_as_it_grows(aio, tmp_path):
    grown = SessionEpisode(**{**episode_store.episode_to_json(SESSION), "ended": "later"} | {
        "calls": SESSION.calls, "tool_counts": SESSION.tool_counts, "asked": SESSION.asked})
    async with await Store.open(tmp_path / "c.db") as store:
        async with store.transaction():
            await episode_store.put_episodes(store, [SESSION], transcript="t", now=1.0)
        async with store.transaction():
            new = await episode_store.put_episodes(store, [grown, ERROR], transcript="t", now=2.0)
        sessions = await episode_store.load_episodes(store, kinds=[EpisodeKind.SESSION])
    assert new == 1
    assert [s.episode.ended for s in sessions] == ["later"]


async def test_archived_episodes_are_left_out_unless_asked_for(aio, tmp_path):
    async with await Store.open(tmp_path / "c.db") as store:
        async with store.transaction():
            await episode_store.put_episodes(store, [ERROR, CORRECTION], transcript="t", now=1.0)
            await episode_store.mark_archived(store, [episode_store.episode_key(ERROR)], now=5.0)
        live = await episode_store.load_episodes(store)
        every = await episode_store.load_episodes(store, include_archived=True)
    assert [s.episode for s in live] == [CORRECTION]
    assert len(every) == 2 and every[0].archived_at == 5.0


async def test_an_error_resolved_later_replaces_its_row_and_keeps_its_resolution(aio, tmp_path):
    from dataclasses import replace

    from commons.core.learning.evidence import Evidence, Resolution

    resolved = replace(ERROR, command="pytest -q", resolution=Resolution(
        Evidence.CHANGED_BEFORE, "uv add --dev pytest-asyncio", "Bash", 0.7, "pytest -q", ("uv sync",)))
    async with await Store.open(tmp_path / "c.db") as store:
        async with store.transaction():
            await episode_store.put_episodes(store, [ERROR], transcript="t", now=1.0)
        async with store.transaction():
            new = await episode_store.put_episodes(store, [resolved], transcript="t", now=2.0)
        (loaded,) = [s.episode for s in await episode_store.load_episodes(store, kinds=[EpisodeKind.ERROR])]
    assert new == 0 and loaded == resolved


def test_rows_written_before_resolutions_existed_still_load():
    old_error = {"session": "s1", "uid": "toolu_1", "at": 150.0, "tool": "Bash", "target": "pytest -q",
                 "failure": "E   boom", "exit_code": 1}
    old_correction = {"session": "s1", "uid": "u9", "at": 160.0, "said": "no, use uv", "preceding": "pip install x",
                      "via_rejection": False}
    assert episode_store.episode_from_json(EpisodeKind.ERROR, old_error) == ERROR
    assert episode_store.episode_from_json(EpisodeKind.CORRECTION, old_correction) == CORRECTION
