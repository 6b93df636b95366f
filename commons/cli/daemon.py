"""`commons daemon`, `commons status`, `commons peers`, `commons publish`, `commons service`."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from commons.cli.context import Context, add_json_flag, emit
from commons.clock import ShiftedClock, SystemClock, format_time, parse_time
from commons.config import NetworkConfig, _hex_key, _host_port
from commons.daemon.logs import setup_logging
from commons.daemon.main import DEFAULT_PORT_TRIES, LAST_INGEST, LAST_SYNC, Daemon
from commons.daemon.status import read_daemon_file
from commons.errors import CommonsError, UsageError
from commons.node import publish
from commons.store import lessons as lesson_store
from commons.store import peers as peer_store
from commons.store import records as record_store
from commons.store import settings, transcripts


def register(subparsers: argparse._SubParsersAction) -> None:
    daemon = subparsers.add_parser(
        "daemon", help="run the node in the foreground: gossip, ingest, nightly sleep",
        description=("Run this node in the foreground until SIGINT or SIGTERM: listen for peers, dial the "
                     "configured, added, exchanged and discovered ones, watch the transcript folders, "
                     "sleep nightly at [sleep] at (and at start if a night was missed), render the memory "
                     "folder. Logs go to stderr (without timestamps and with <N> priorities under systemd's "
                     "journal) and to <data>/logs/daemon.log, rotated at [log] max_bytes. One daemon per home. "
                     "With --at the daemon's clock starts at that time and runs at real speed."))
    daemon.add_argument(
        "--listen", metavar="HOST:PORT",
        help=("where to accept peers (default: [network] listen, 127.0.0.1:7346: this machine only). "
              "0.0.0.0:PORT accepts peers from every network this machine is on and turns on LAN "
              "discovery; port 0 picks a free port (`commons status` shows it)."))
    daemon.set_defaults(handler=cmd_daemon, asyncio_bridge=True)  # aiosqlite's thread, zeroconf

    status = subparsers.add_parser(
        "status", help="what the node and its daemon are doing",
        description=("Listening address, connected peers, records by type, lessons by status, last "
                     "ingest, sleep and sync, and whether publishing is on. Works with or without a daemon."))
    add_json_flag(status)
    status.set_defaults(handler=cmd_status)

    peers = subparsers.add_parser(
        "peers", help="list, add and remove peers",
        description=("Peers: configured ([[peers]] in config.toml, read-only), added (`commons peers add`), "
                     "and those the daemon exchanged, discovered or accepted, with score and last sync."))
    add_json_flag(peers)
    peers.set_defaults(handler=cmd_peers)
    commands = peers.add_subparsers(dest="peers_command", metavar="SUBCOMMAND")
    add = commands.add_parser("add", help="add a peer to dial",
                              description="Add a peer; a running daemon dials it within seconds.")
    add.add_argument("address", help="HOST:PORT, e.g. 192.0.2.10:7346")
    add.add_argument("transport_key", help="the peer's transport key (`commons id` on the peer)")
    add_json_flag(add)
    add.set_defaults(handler=cmd_peers_add)
    remove = commands.add_parser("remove", help="remove a peer added with `commons peers add`")
    remove.add_argument("transport_key")
    add_json_flag(remove)
    remove.set_defaults(handler=cmd_peers_remove)

    pub = subparsers.add_parser(
        "publish", help="share this node's shared lessons with the commons: on or off",
        description=("Off by default. With publishing on, the node signs its active shared-scope lessons "
                     "(scrubbed of secrets, paths, e-mail addresses and host names; a lesson that still "
                     "looks private is kept back) and its daemon sends them to peers. Others' records "
                     "are relayed either way. Without an argument, says whether publishing is on."))
    pub.add_argument("state", nargs="?", choices=("on", "off"))
    add_json_flag(pub)
    pub.set_defaults(handler=cmd_publish)

    service = subparsers.add_parser("service", help="run the daemon as a systemd user service")
    service_commands = service.add_subparsers(dest="service_command", metavar="SUBCOMMAND")
    install = service_commands.add_parser(
        "install", help="write ~/.config/systemd/user/commons.service",
        description=("Write a systemd user unit that runs `commons daemon` for this home, and say how to "
                     "enable it. A unit already there is left alone unless it is the same or --force is given."))
    install.add_argument("--listen", metavar="HOST:PORT", help="passed to `commons daemon --listen`")
    install.add_argument("--force", action="store_true", help="replace a unit that is already there")
    add_json_flag(install)
    install.set_defaults(handler=cmd_service_install)
    uninstall = service_commands.add_parser(
        "uninstall", help="remove ~/.config/systemd/user/commons.service",
        description=("Remove the systemd user unit `commons service install` wrote, and say how to stop the "
                     "running service. Keys, config and data stay where they are."))
    add_json_flag(uninstall)
    uninstall.set_defaults(handler=cmd_service_uninstall)
    service.set_defaults(handler=None, _help=service)


async def cmd_daemon(ctx: Context, args: argparse.Namespace) -> int:
    listen = args.listen or ctx.config.network.listen
    # The default port may be another home's on this machine: take the next free one. A port the
    # person chose is theirs: taken, it is said (commons.daemon.main.bind_listeners).
    chosen = args.listen is not None or listen != NetworkConfig.listen
    fixed = ctx.at or ctx.config.clock.at
    try:
        clock = ShiftedClock(parse_time(fixed)) if fixed else SystemClock()
    except ValueError as error:
        raise UsageError(str(error)) from None
    me = ctx.identity
    setup_logging(ctx.home, getattr(args, "verbose", False), ctx.config.log)
    return await Daemon(ctx.home, ctx.config, me, clock, listen, port_tries=1 if chosen else DEFAULT_PORT_TRIES).run()


def _when(value: float | None) -> str | None:
    return None if value is None else format_time(value)


async def cmd_status(ctx: Context, args: argparse.Namespace) -> int:
    running = read_daemon_file(ctx.home)
    async with await ctx.open_store(readonly=True) as store:
        by_type = await record_store.counts_by_type(store)
        refused = await record_store.refused_count(store)
        by_origin = await record_store.counts_by_origin(store)
        lessons = await lesson_store.counts_by_status(store)
        last_sleep = await lesson_store.last_sleep_at(store)
        read_at = await transcripts.last_read_at(store)  # `commons ingest` or the daemon
        last_ingest = max((t for t in (read_at, await settings.get(store, LAST_INGEST)) if t is not None),
                          default=None)
        # The peers table's, and the daemon's own (inbound peers leave no row behind).
        last_sync = max((t for t in (await peer_store.last_sync(store), await settings.get(store, LAST_SYNC))
                         if t is not None), default=None)
        publishing = await publish.is_on(store)
        held = await ctx.node.trust.held(store, ctx.now())
        commons_layer: dict[str, int] = {}
        for state in held.view.lessons.values():
            if state.author != ctx.identity.author_public:  # lessons other agents taught this node
                commons_layer[state.status.value] = commons_layer.get(state.status.value, 0) + 1
    data = {
        "daemon": running is not None,
        "pid": running and running.get("pid"),
        "listen": running and running.get("listen"),
        "transport_key": ctx.identity.transport_public.hex(),
        "peers_connected": len(running.get("connected", [])) if running else 0,
        "sessions": running.get("sessions", []) if running else [],
        "records": {"by_type": by_type, "by_origin": by_origin, "refused": refused},
        "lessons": lessons,
        "received_lessons": commons_layer,
        "last_ingest": _when(last_ingest),
        "last_sleep": _when(last_sleep),
        "last_sync": (running or {}).get("last_sync") or _when(last_sync),
        "publishing": publishing,
    }

    def text() -> str:
        directions = [s["direction"] for s in data["sessions"]]
        split = (f" ({directions.count('inbound')} inbound, {directions.count('outbound')} outbound)"
                 if directions else "")
        head = (f"daemon: running (pid {data['pid']}), listening on {data['listen']}, "
                f"{data['peers_connected']} peer{'s' * (data['peers_connected'] != 1)} connected{split}"
                if running else "daemon: not running")
        types = ", ".join(f"{n} {t}" for t, n in by_type.items())
        return "\n".join([
            head,
            f"records: {types}; {refused} refused",
            "lessons: " + (", ".join(f"{n} {s}" for s, n in sorted(lessons.items())) or "none"),
            "received lessons: " + (", ".join(f"{n} {s}" for s, n in sorted(commons_layer.items())) or "none"),
            f"last ingest: {data['last_ingest'] or 'never'}; last sleep: {data['last_sleep'] or 'never'}; "
            f"last sync: {data['last_sync'] or 'never'}",
            f"publishing: {'on' if publishing else 'off'}",
        ])

    emit(args, data, text)
    return 0


def _parse_key(text: str) -> bytes:
    try:
        return _hex_key(text)
    except ValueError as error:
        raise UsageError(f"transport key: expected {error}") from None


async def cmd_peers(ctx: Context, args: argparse.Namespace) -> int:
    running = read_daemon_file(ctx.home)
    connected = set(running.get("connected", [])) if running else set()
    listed: dict[str, dict] = {}
    for entry in ctx.config.peers:
        listed[entry.transport_key] = {"transport_key": entry.transport_key, "address": entry.address,
                                       "source": "configured", "score": 0.0, "last_sync": None}
    async with await ctx.open_store(readonly=True) as store:
        rows = await peer_store.all_peers(store)
    for row in rows:
        key = row.transport_key.hex()
        item = listed.setdefault(key, {"transport_key": key, "source": row.source})
        item.update(address=item.get("address") or row.address, score=row.score, last_sync=_when(row.last_sync))
    for key, item in listed.items():
        item["connected"] = key in connected
    data = list(listed.values())

    def text() -> str:
        if not data:
            return "no peers (add one with `commons peers add HOST:PORT TRANSPORT_KEY`)"
        return "\n".join(
            f"{'*' if p['connected'] else ' '} {p['transport_key'][:16]}  {p.get('address') or '-':<22} "
            f"{p['source']:<10} score {p.get('score', 0):g}  last sync {p.get('last_sync') or 'never'}"
            for p in data)

    emit(args, data, text)
    return 0


async def cmd_peers_add(ctx: Context, args: argparse.Namespace) -> int:
    try:
        _host_port(args.address)
    except ValueError as error:
        raise UsageError(f"address {args.address!r}: expected {error}") from None
    key = _parse_key(args.transport_key)
    if key == ctx.identity.transport_public:
        raise UsageError("that is this node's own transport key")
    async with await ctx.open_store() as store:
        await peer_store.add(store, key, args.address, ctx.now())
    emit(args, {"added": key.hex(), "address": args.address}, f"added {args.address} ({key.hex()[:16]})")
    return 0


async def cmd_peers_remove(ctx: Context, args: argparse.Namespace) -> int:
    key = _parse_key(args.transport_key)
    async with await ctx.open_store() as store:
        removed = await peer_store.remove(store, key)
    if not removed:
        raise CommonsError(f"no stored peer {key.hex()[:16]} (peers in config.toml are removed by editing it)")
    emit(args, {"removed": key.hex()}, f"removed {key.hex()[:16]}; a running daemon disconnects from it")
    return 0


async def cmd_publish(ctx: Context, args: argparse.Namespace) -> int:
    async with await ctx.open_store() as store:
        if args.state is not None:
            await publish.set_on(store, args.state == "on", ctx.now())
        on = await publish.is_on(store)
        # judgements of received lessons go out under the same opt-in as the lessons
        made = await publish.publish_pending(store, ctx.node, ctx.now()) if on else None
    verifications = made.verifications if made else ()
    data = {"publishing": on, "published": [r.id.hex() for r in made.lessons] if made else [],
            "verifications": [r.id.hex() for r in verifications],
            "kept_back": [{"lesson": s.lesson_id, "reason": s.reason} for s in made.skipped] if made else []}

    def text() -> str:
        lines = [f"publishing: {'on' if on else 'off'}"]
        if made is not None:
            lines.append(f"signed {len(made.lessons)} shared lessons and {len(verifications)} verifications; "
                         "a running daemon sends them to peers")
            lines += [f"  kept back {s.lesson_id[:12]}: {s.reason}" for s in made.skipped]
        return "\n".join(lines)

    emit(args, data, text)
    return 0


def unit_text(ctx: Context, listen: str | None) -> str:
    command = [sys.executable, "-m", "commons", "daemon"] + (["--listen", listen] if listen else [])
    env = os.environ.get("COMMONS_HOME")
    lines = [
        "[Unit]",
        "Description=commons: a memory for coding agents, and the commons they share",
        "After=network-online.target",
        "",
        "[Service]",
        "ExecStart=" + " ".join(shlex.quote(part) for part in command),
    ]
    if env:
        lines.append(f'Environment="COMMONS_HOME={Path(env).expanduser().absolute()}"')
    lines += ["Restart=on-failure", "RestartSec=10", "KillSignal=SIGTERM", "TimeoutStopSec=30", "",
              "[Install]", "WantedBy=default.target", ""]
    return "\n".join(lines)


def _unit_path() -> Path:
    base = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return base / "systemd" / "user" / "commons.service"


def cmd_service_install(ctx: Context, args: argparse.Namespace) -> int:
    path = _unit_path()
    text = unit_text(ctx, args.listen)
    existing = path.read_text(encoding="utf-8") if path.exists() else None
    if existing is not None and existing != text and not args.force:
        raise CommonsError(f"{path} already exists and differs from the unit this home needs; "
                           "`commons service install --force` replaces it (or remove it with "
                           "`commons service uninstall`)")
    path.parent.mkdir(parents=True, exist_ok=True)
    if existing != text:
        path.write_text(text, encoding="utf-8")
    done = "unchanged (already installed)" if existing == text else ("replaced" if existing else "wrote")
    emit(args, {"unit": str(path), "action": done.split()[0],
                "enable": ["systemctl --user daemon-reload", "systemctl --user enable --now commons"]},
         f"{done}: {path}\nenable and start it with:\n  systemctl --user daemon-reload\n"
         "  systemctl --user enable --now commons\n"
         "logs: journalctl --user -u commons (and <data>/logs/daemon.log)")
    return 0


def cmd_service_uninstall(ctx: Context, args: argparse.Namespace) -> int:
    path = _unit_path()
    removed = path.exists()
    if removed:
        path.unlink()
    emit(args, {"unit": str(path), "removed": removed,
                "then": ["systemctl --user disable --now commons", "systemctl --user daemon-reload"]},
         (f"removed {path}\nif the service was running, stop it and reload systemd:\n"
          "  systemctl --user disable --now commons\n  systemctl --user daemon-reload") if removed
         else f"no unit at {path}; nothing to remove")
    return 0
