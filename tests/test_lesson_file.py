"""A lesson's own file holds what the index line cannot: each failure and fix seen, how often,
first and last seen, in how many sessions; and in the index, lessons that name what worked come
before those that do not."""

from __future__ import annotations

from commons.core.learning.episode import CorrectionEpisode, ErrorEpisode
from commons.core.learning.lessons import lesson_detail, lesson_resolved
from commons.core.learning.evidence import Evidence, Resolution
from commons.render.memory_folder import Layer, RenderItem, lesson_file, render

DAY = 86_400.0
PUSH_FAILED = "fatal: The current branch spotter-gqc has no upstream branch."


def push_error(session: str, at: float, fixed: bool) -> ErrorEpisode:
    fix = Resolution(Evidence.RETRY_CHANGED, "git push --set-upstream origin spotter-gqc", "Bash", confidence=0.9) if fixed else None
    return ErrorEpisode(session=session, uid=f"{session}-u", at=at, tool="Bash", target="git push",
                        failure=PUSH_FAILED, resolution=fix)


def test_the_lesson_file_names_each_failure_and_fix_with_counts_dates_and_sessions():
    episodes = [push_error("s1", 1_770_000_000.0, True), push_error("s2", 1_770_000_000.0 + 3 * DAY, True),
                push_error("s3", 1_770_000_000.0 + 5 * DAY, False)]
    detail = lesson_detail(episodes, ["spotter"])
    assert detail[0] == "Met 3 times in 3 sessions, first on 2026-02-02, last on 2026-02-07."
    fixed = [line for line in detail if "worked after it" in line]
    assert fixed == ["- `git push` failed with \"fatal: The current branch <branch> has no upstream branch.\"; "
                     "`git push --set-upstream origin <branch>` worked after it (retry-changed) (2×)"]
    assert any(line.endswith("no fix was seen") for line in detail)
    text = lesson_file("own", RenderItem(id="a" * 64, text="`git push` failed …", kind="error", scope="shared",
                                         strength=1.0, seen=3, detail=detail))
    assert "## What was seen" in text and "(2×)" in text


def test_a_secret_in_an_episode_never_reaches_the_lesson_file():
    leaked = ErrorEpisode(session="s1", uid="u1", at=1_770_000_000.0, tool="Bash",
                          target="curl -H 'Authorization: Bearer ghp_abcdefghijklmnopqrstuvwxyz0123456789'",
                          failure="401 Unauthorized")
    assert not any("ghp_abcdefghijklmnop" in line for line in lesson_detail([leaked]))


def test_lessons_that_name_what_worked_come_first_in_the_index(tmp_path):
    correction = CorrectionEpisode(session="s", uid="c", at=0.0, said="no, this project uses uv", preceding="")
    assert lesson_resolved([push_error("s1", 0.0, True)]) and lesson_resolved([correction])
    assert not lesson_resolved([push_error("s1", 0.0, False), push_error("s2", 0.0, False)])
    strong_unresolved = RenderItem(id="b" * 64, text="`mix test` failed; no fix was seen.", kind="error",
                                   scope="local", strength=3.0, seen=5, resolved=False)
    weak_resolved = RenderItem(id="c" * 64, text="`npm ci` failed; `npm install` succeeded after it.",
                               kind="error", scope="local", strength=1.0, seen=2)
    render(tmp_path, [Layer("own", [strong_unresolved, weak_resolved])])
    index = (tmp_path / "MEMORY.md").read_text()
    assert index.index("npm install") < index.index("no fix was seen")
