"""An edit that failed, mended by a script that writes the file (`python - <<PY … write_text`,
`node -e … writeFileSync`, `ruby -e File.write`), is the edit tried again; a script that only
reads the file is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from commons.core.learning.evidence import StepKind, retry_part, segment_kind, written_paths
from commons.core.learning.script_writes import script_write_step, script_writes
from commons.home import Home
from tests.transcripts import lesson_about, session

APP = "/home/dev/ledger/ui/src/App.tsx"
PY_REWRITE = """python3 - <<'PY'
from pathlib import Path
path = Path('ui/src/App.tsx')
text = path.read_text()
path.write_text(text.replace('onDrag={drag}', 'onNodeDrag={drag}'))
PY"""


@pytest.mark.parametrize("script", [
    PY_REWRITE,
    """python -c "open('ui/src/App.tsx', 'w').write(src)" """,
    """node -e "require('fs').writeFileSync('ui/src/App.tsx', out)" """,
    "node <<'JS'\nconst fs = require('fs');\nconst file = 'ui/src/App.tsx';\nfs.writeFileSync(file, out);\nJS",
    """ruby -e "File.write('ui/src/App.tsx', src)" """,
])
def test_a_script_writing_the_file_an_edit_could_not_is_the_edit_tried_again(script: str):
    assert [path for path, _ in script_writes(script)] == ["ui/src/App.tsx"]
    assert retry_part("Edit", APP, "Bash", script) == script.strip()
    assert segment_kind(script) is StepKind.STATE_CHANGING


def test_a_script_that_reads_the_file_and_writes_another_is_no_retry_of_its_edit():
    script = "python3 - <<'PY'\nimport pathlib\nsrc = pathlib.Path('ui/src/App.tsx').read_text()\n" \
             "pathlib.Path('/tmp/App.copy').write_text(src)\nPY"
    assert written_paths(script) == ["/tmp/App.copy"]
    assert retry_part("Edit", APP, "Bash", script) is None
    assert script_writes("python3 -c \"print(open('ui/src/App.tsx').read())\"") == []


def test_an_in_place_flag_among_others_writes_the_file_and_a_module_flag_does_not():
    assert written_paths("perl -0pi -e 's/a/b/' ui/src/App.tsx") == ["ui/src/App.tsx"]
    assert written_paths("sed -i.bak 's/a/b/' ui/src/App.tsx") == ["ui/src/App.tsx"]
    assert written_paths("perl -Mstrict -e 'print 1' ui/src/App.tsx") == []


def test_a_script_write_is_named_by_its_program_and_the_write():
    assert script_write_step(PY_REWRITE, "App.tsx") == "python3 … path.write_text (ui/src/App.tsx)"
    assert script_write_step("""ruby -e "File.write('ui/src/App.tsx', src)" """, "App.tsx") == \
        "ruby … File.write('ui/src/App.tsx', …)"
    assert script_write_step(PY_REWRITE, "main.rs") is None


def _edit_refused_then_script_rewrite(folder: Path, day: int) -> Path:
    s = session(folder, day, f"rewrite-{day}")
    s.user("use onNodeDrag in the canvas")
    edit = {"file_path": APP, "old_string": "onDrag={drag}", "new_string": "onNodeDrag={drag}"}
    (tool_id,) = s.say(("Edit", edit))
    s.result(tool_id, "<tool_use_error>File has been modified since read, either by the user or by a linter. "
                      "Read it again before attempting to write it.</tool_use_error>", error=True)
    s.bash(PY_REWRITE, "Rewrite the prop from a script", "")
    s.say(("text", "Rewrote the prop."))
    s.write()
    return s.path


def test_two_sessions_whose_refused_edit_a_script_rewrote_make_a_lesson_naming_the_script(tmp_path: Path, capsys,
                                                                                           home: Home):
    lesson = lesson_about(capsys, "modified since read", lambda day: _edit_refused_then_script_rewrite(tmp_path, day))
    assert lesson["fix"]["evidence"] == "retry-changed"
    assert lesson["fix"]["step"] == "python3 … path.write_text (<path>)"
    assert "`python3 … path.write_text (<path>)` succeeded after it" in lesson["text"]
