"""Bad input and hostile environments (issue #19, item 6): each gets one line naming the file and
what to do, the documented exit code, and loses no data.

A read-only home and a full disk are real: as root, a read-only bind mount and a small tmpfs in a
private mount namespace (`unshare -m`); as another user, a folder without write permission (the
full disk then needs root and is skipped). SQLite's own "database or disk is full" is also driven
in-process with a tiny ``max_page_count``.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from commons.core.learning.episode import CorrectionEpisode
from commons.errors import StoreError
from commons.ingest.claude_code import parse
from commons.store.db import Store
from tests.transcripts import cli, pip_fails, session

AS_ROOT = os.geteuid() == 0
CAN_MOUNT = AS_ROOT and shutil.which("unshare") is not None and subprocess.run(
    ["unshare", "-m", "true"], capture_output=True).returncode == 0
needs_mount = pytest.mark.skipif(not CAN_MOUNT, reason="needs root and `unshare -m` for a tmpfs of its own")


def commons_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "commons", *args]


def run_commons(home: Path, *args: str, mount: str | None = None) -> subprocess.CompletedProcess:
    """`commons ARGS` in ``home``; ``mount`` is a shell line run first in a private mount namespace."""
    env = dict(os.environ, COMMONS_HOME=str(home))
    env.pop("COMMONS_AT", None)
    argv = commons_argv(*args)
    if mount:
        argv = ["unshare", "-m", "sh", "-c", f"{mount} && exec {shlex.join(argv)}"]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)


def a_home_with_episodes(tmp_path: Path) -> Path:
    """An initialised home that ingested two sessions with a failing `pip install`."""
    home = tmp_path / "home"
    folder = tmp_path / "transcripts"
    for day in (3, 4):
        s = session(folder, day, "pip")
        s.user("add requests to the project")
        pip_fails(s, "requests")
        s.write()
    assert run_commons(home, "init").returncode == 0
    done = run_commons(home, "ingest", str(folder))
    assert done.returncode == 0, done.stderr
    return home


def episode_count(home: Path) -> int:
    db = sqlite3.connect(f"file:{home / 'data' / 'commons.db'}?mode=ro", uri=True)
    try:
        return db.execute("SELECT count(*) FROM episodes").fetchone()[0]
    finally:
        db.close()


def one_error_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("commons: error: ") and "internal error" not in lines[0], stderr
    return lines[0]


# -- a full disk ------------------------------------------------------------------------------------


def on_a_full_disk(tmp_path: Path, home: Path, free_kib: int, *args: str) -> tuple[int, str, Path]:
    """`commons ARGS` on a tmpfs holding a copy of ``home`` and a filler leaving ``free_kib`` KiB:
    (exit code, stderr, the home copied back out after the filler was removed and `store check` ran)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    script = f"""
        mount -t tmpfs -o size=8m none {disk} && cp -a {home} {disk}/home &&
        (dd if=/dev/zero of={disk}/filler bs=4k 2>/dev/null; truncate -s -{free_kib}K {disk}/filler) &&
        COMMONS_HOME={disk}/home {shlex.join(commons_argv(*args))} > {tmp_path}/full.out 2> {tmp_path}/full.err;
        echo $? > {tmp_path}/full.rc; rm {disk}/filler;
        COMMONS_HOME={disk}/home {shlex.join(commons_argv('store', 'check', '--json'))} > {tmp_path}/check.out;
        rm -rf {tmp_path}/after && cp -a {disk}/home {tmp_path}/after
    """
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "check.out").read_text())["ok"] is True
    line = one_error_line((tmp_path / "full.err").read_text())
    return int((tmp_path / "full.rc").read_text()), line.replace(str(disk / "home"), "<home>"), tmp_path / "after"


@needs_mount
@pytest.mark.parametrize("free_kib", [0, 40])
def test_sleep_on_a_full_disk_names_the_database_loses_nothing_and_works_once_space_is_freed(tmp_path, free_kib):
    home = a_home_with_episodes(tmp_path)
    before = episode_count(home)
    code, line, after = on_a_full_disk(tmp_path, home, free_kib, "sleep")
    assert code == 1
    assert "<home>/data/commons.db" in line and "is full" in line and "free some space" in line
    assert episode_count(after) == before
    again = run_commons(after, "sleep")
    assert again.returncode == 0, again.stderr


@needs_mount
def test_ingest_on_a_full_disk_names_where_and_reads_the_transcript_once_space_is_freed(tmp_path):
    home = tmp_path / "home"
    assert run_commons(home, "init").returncode == 0
    s = session(tmp_path / "t", 8, "late")
    pip_fails(s, "requests")
    s.write()
    code, line, after = on_a_full_disk(tmp_path, home, 40, "ingest", str(tmp_path / "t"))
    assert code == 1 and "<home>/data" in line and "free some space" in line
    again = run_commons(after, "ingest", str(tmp_path / "t"), "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["episodes"]["error"] == 1


async def test_a_write_that_fills_the_database_is_rolled_back_and_the_store_takes_the_next(aio, tmp_path):
    async with await Store.open(tmp_path / "commons.db") as store:
        async with store.transaction():
            await store.execute("CREATE TABLE t (x BLOB)")
            await store.execute("INSERT INTO t VALUES (x'01')")
        pages = await store.scalar("PRAGMA page_count")
        await store.fetchall(f"PRAGMA max_page_count = {pages + 2}")  # SQLite's SQLITE_FULL, no disk needed
        with pytest.raises(StoreError, match=r"commons\.db is full .*free some space"):
            async with store.transaction():
                await store.execute("INSERT INTO t VALUES (?)", (b"x" * 200_000,))
        async with store.transaction():  # not "within a transaction": the full one was rolled back
            await store.execute("INSERT INTO t VALUES (x'02')")
        assert [r[0] for r in await store.fetchall("SELECT x FROM t")] == [b"\x01", b"\x02"]


# -- a read-only home -------------------------------------------------------------------------------


def read_only(home: Path) -> dict:
    """How to run commands with ``home`` read-only: a bind mount as root, permissions otherwise."""
    if CAN_MOUNT:
        return {"mount": f"mount --bind -o ro {home} {home}"}
    if AS_ROOT:
        pytest.skip("root without `unshare -m` cannot be denied writes by permissions")
    for path in [home, *home.rglob("*")]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    return {}


READING_COMMANDS = [("lessons", "--status", "all"), ("status",), ("export",), ("store", "check"), ("episodes",),
                    ("peers",), ("revocations",)]


def test_commands_that_read_work_in_a_read_only_home_and_those_that_write_say_why_they_cannot(tmp_path):
    home = a_home_with_episodes(tmp_path)
    assert run_commons(home, "sleep").returncode == 0
    mode = read_only(home)
    try:
        for args in READING_COMMANDS:
            done = run_commons(home, *args, **mode)
            assert done.returncode == 0, f"commons {' '.join(args)}: {done.stderr}"
        recalled = run_commons(home, "recall", "pip install", "--json", **mode)
        assert json.loads(recalled.stdout), "recall answers from a read-only home"
        done = run_commons(home, "lessons", "add", "The `frob` tool exits 3 when its cache is missing.", **mode)
        assert done.returncode == 1
        line = one_error_line(done.stderr)
        assert str(home / "data" / "commons.db") in line and "read-only" in line and "COMMONS_HOME" in line
    finally:
        for path in [home, *home.rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)


# -- transcripts and the order of commands ----------------------------------------------------------


def test_one_invalid_utf8_byte_is_replaced_and_the_correction_on_its_line_survives(tmp_path):
    s = session(tmp_path, 5, "utf8")
    s.user("run the tests")
    s.bash("pytest -q", "Run the tests", "1 failed, 12 passed", exit_code=1)
    s.say(("text", "The tests pass now."))
    s.user("no, that is wrong: the test still fails, look at test_parse again")
    s.write()
    clean = s.path.read_bytes()
    (expected,) = [e for e in parse(clean).episodes if isinstance(e, CorrectionEpisode)]
    broken = clean.replace("look at".encode(), b"look\xff at", 1)
    assert broken != clean
    result = parse(broken)
    (correction,) = [e for e in result.episodes if isinstance(e, CorrectionEpisode)]
    assert correction.said == expected.said.replace("look at", "look\ufffd at")
    assert result.skipped_lines == 0


def test_ingest_before_init_refuses_and_makes_no_database(home, tmp_path, capsys):
    s = session(tmp_path / "t", 6, "early")
    pip_fails(s, "requests")
    s.write()
    code, _, err = cli(capsys, "ingest", str(tmp_path / "t"))
    assert code == 1 and "not initialised" in err and "run `commons init` first" in err
    assert not home.data_dir.exists()


def test_init_on_an_initialised_home_exits_zero_and_keeps_keys_and_config(home, capsys):
    assert cli(capsys, "init")[0] == 0
    keys = {p.name: p.read_bytes() for p in home.keys_dir.iterdir()}
    config = home.config_file.read_text()
    code, out, _ = cli(capsys, "init", "--network-key", "cd" * 32)
    assert code == 0 and "already initialised" in out
    assert {p.name: p.read_bytes() for p in home.keys_dir.iterdir()} == keys
    assert home.config_file.read_text() == config


# -- the systemd unit -------------------------------------------------------------------------------


def service(tmp_path: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, COMMONS_HOME=str(home), XDG_CONFIG_HOME=str(tmp_path / "xdg"))
    return subprocess.run(commons_argv("service", *args), env=env, capture_output=True, text=True, timeout=60)


def test_service_install_refuses_to_overwrite_a_different_unit_without_force_and_uninstall_removes_it(tmp_path):
    home = tmp_path / "home"
    unit = tmp_path / "xdg" / "systemd" / "user" / "commons.service"
    assert service(tmp_path, home, "install").returncode == 0
    first = unit.read_text()
    assert service(tmp_path, home, "install").returncode == 0  # the same unit again: nothing to overwrite
    refused = service(tmp_path, home, "install", "--listen", "0.0.0.0:7346")
    assert refused.returncode == 1
    line = one_error_line(refused.stderr)
    assert str(unit) in line and "--force" in line
    assert unit.read_text() == first
    forced = service(tmp_path, home, "install", "--listen", "0.0.0.0:7346", "--force")
    assert forced.returncode == 0 and "--listen 0.0.0.0:7346" in unit.read_text()
    removed = service(tmp_path, home, "uninstall", "--json")
    assert removed.returncode == 0 and json.loads(removed.stdout)["removed"] is True and not unit.exists()
    again = service(tmp_path, home, "uninstall")
    assert again.returncode == 0 and "nothing to remove" in again.stdout
