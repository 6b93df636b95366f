"""Every command a file commons renders for an agent tells the reader to run is one the CLI takes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from commons.cli import build_parser
from commons.errors import UsageError
from commons.render import agents_md
from commons.render.memory_folder import RenderItem

COMMAND = re.compile(r"`(commons [^`]+)`")


def rendered(tmp_path: Path, lessons: int) -> str:
    items = [RenderItem(id=f"{n:02x}" * 32, text=f"`tool{n}` failed with \"error {n}\"; `fix{n}` succeeded after it.",
                        kind="error", strength=1.0, seen=2, scope="shared") for n in range(lessons)]
    target = tmp_path / f"AGENTS-{lessons}.md"
    agents_md.render(target, items, budget=600)
    return target.read_text()


@pytest.mark.parametrize("lessons", [0, 1, 40])
def test_every_command_an_agents_file_names_parses(tmp_path, lessons):
    text = rendered(tmp_path, lessons)
    commands = COMMAND.findall(text)
    assert commands, text
    lesson_id = re.search(r"commons ([0-9a-f]{12})\)", text)
    parser = build_parser()
    for command in commands:
        words = command.split()[1:]
        words = [lesson_id.group(1) if w == "ID" and lesson_id else "a1b2c3d4e5f6" if w == "ID" else w for w in words]
        try:
            parser.parse_args(words)
        except (UsageError, SystemExit) as error:
            pytest.fail(f"`{command}` does not parse: {error}")
