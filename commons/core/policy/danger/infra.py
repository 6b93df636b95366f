"""The rules about what runs the software: containers, clusters, infrastructure, databases and
their migrations."""

from __future__ import annotations

import re

from commons.core.policy.danger.shell import Command
from commons.core.policy.danger.rule import DB_CLIENTS, SQL_DESTROYS, Step, applies_to


@applies_to("docker", "podman")
def docker_prune(command: Command, step: Step) -> bool:
    if command.program not in ("docker", "podman"):
        return False
    low = command.lowered
    if low[:2] in (("system", "prune"),):
        return command.flag("--all", "a", "--volumes")
    if low[:2] == ("volume", "prune"):
        return True
    if low[:2] in (("volume", "rm"), ("volume", "remove")):
        # A volume named for a cache holds what a build makes again; any other may hold a database.
        return not all("cache" in name for name in command.positional()[2:]) or len(command.positional()) < 3
    if low[:1] in (("rm",), ("rmi",), ("kill",)) or low[:2] in (("container", "rm"), ("image", "rm"), ("container", "prune")):
        return any("$(" in a and ("-a" in a or "-q" in a) for a in command.args) or low[:2] == ("container", "prune")
    return False


@applies_to("docker-compose", "docker", "podman")
def compose_down(command: Command, step: Step) -> bool:
    compose = command.program == "docker-compose" or (command.program in ("docker", "podman") and command.sub == "compose")
    return compose and "down" in command.lowered and command.flag("--volumes", "v")


@applies_to("kubectl", "oc", "k")
def kubectl_delete(command: Command, step: Step) -> bool:
    if command.program not in ("kubectl", "oc", "k"):
        return False
    low = command.lowered
    if command.sub != "delete":
        return command.sub in ("drain",) and any(a.startswith("--delete-emptydir-data") or a == "--delete-local-data"
                                                  for a in low) or (command.sub == "replace" and "--force" in low)
    what = [a for a in command.positional()[1:]]
    if any(a in ("--all", "--all-namespaces", "-a") or a.startswith("--grace-period=0") for a in low):
        return True
    kinds = {w.split("/")[0] for w in what}
    return bool(kinds & {"namespace", "namespaces", "ns", "pvc", "pv", "persistentvolumeclaim", "persistentvolume",
                         "persistentvolumeclaims", "statefulset", "sts", "crd", "customresourcedefinition", "secret",
                         "deployment", "deploy", "node", "nodes"}) or "-f" in low and not what


@applies_to("helm")
def helm_uninstall(command: Command, step: Step) -> bool:
    return command.program == "helm" and command.sub in ("uninstall", "delete", "del")


@applies_to("terraform", "tofu", "terragrunt", "pulumi", "cdktf")
def terraform(command: Command, step: Step) -> bool:
    if command.program not in ("terraform", "tofu", "terragrunt", "pulumi", "cdktf"):
        return False
    low = command.lowered
    sub = command.sub
    if sub in ("destroy",) or (sub == "apply" and "-destroy" in low) or (command.program == "pulumi" and sub == "destroy"):
        return True
    if sub == "state" and any(a in ("rm", "push", "replace-provider") for a in low):
        return True
    if sub == "workspace" and "delete" in low:
        return True
    return sub in ("apply", "up") and any(a.startswith("-replace") for a in low)


@applies_to("terraform", "tofu", "terragrunt", "pulumi")
def terraform_skip(command: Command, step: Step) -> bool:
    if command.program not in ("terraform", "tofu", "terragrunt", "pulumi"):
        return False
    low = command.lowered
    if command.sub == "force-unlock":
        return True
    return any(a in ("-lock=false", "--lock=false") for a in low) or (
        command.sub in ("apply", "up") and any(a in ("-auto-approve", "--auto-approve", "--yes", "-y", "--skip-preview")
                                               for a in low))


@applies_to(*DB_CLIENTS, "echo", "cat", "printf")
def sql(command: Command, step: Step) -> bool:
    if command.program not in DB_CLIENTS and not (command.program in ("echo", "cat", "printf") and command.joined != "|"):
        return False
    if command.program in ("echo", "cat", "printf"):
        after = [c for c in step.commands if c.pipeline == command.pipeline and c.program in DB_CLIENTS]
        if not after:
            return False
    text = " ".join(command.args) + "\n" + command.stdin
    return bool(SQL_DESTROYS.search(text)) and not re.search(r"\bIF\s+EXISTS\b.*\bCREATE\b", text, re.IGNORECASE | re.DOTALL)


@applies_to("dropdb", "dropuser", "mysqladmin")
def drop_tools(command: Command, step: Step) -> bool:
    return command.program in ("dropdb", "dropuser", "mysqladmin") and (command.program != "mysqladmin" or "drop" in command.lowered)


_MANAGE = re.compile(r"(?:^|/)manage\.py$|^<path>$")  # a lesson's placeholder may stand for manage.py
_DJANGO_PROGRAMS = ("django-admin", "python", "python3", "py", "manage.py", "<path>")  # what `_django` can be true of
_DJANGO_COMMANDS = frozenset({"migrate", "flush", "reset_db", "sqlflush", "loaddata", "makemigrations", "runserver",
                              "dbshell", "shell", "test", "collectstatic", "createsuperuser"})


def _django(command: Command) -> bool:
    words, program = command.words, command.program
    if program == "django-admin":
        return True
    at = 1 if program in ("python", "python3", "py") else 0
    return len(words) > at + 1 and bool(_MANAGE.search(words[at])) and words[at + 1] in _DJANGO_COMMANDS


@applies_to(*_DJANGO_PROGRAMS, "prisma", "rails", "rake", "alembic", "sequelize", "sequelize-cli", "knex", "typeorm",
            "typeorm-ts-node-commonjs", "mix", "php", "artisan", "diesel", "sqlx", "supabase", "flyway", "liquibase")
def migration_destroys(command: Command, step: Step) -> bool:
    program, low = command.program, command.lowered
    if _django(command):
        rest = list(low[next((i for i, a in enumerate(low) if a in _DJANGO_COMMANDS), 0):])
        if rest[:1] in (["flush"], ["reset_db"], ["sqlflush"]):
            return True
        return rest[:1] == ["migrate"] and "zero" in rest
    if program == "prisma":
        return (low[:2] == ("migrate", "reset")) or (low[:2] == ("db", "push") and any(
            a in ("--accept-data-loss", "--force-reset") for a in low))
    if program in ("rails", "rake", "bin/rails", "bin/rake"):
        return any(a.split("[")[0] in ("db:drop", "db:reset", "db:schema:load", "db:purge", "db:migrate:reset",
                                      "db:structure:load", "db:truncate_all") for a in low)
    if program == "alembic":
        return low[:1] == ("downgrade",) and any(a in ("base", "-1") or a.startswith("-") and a[1:].isdigit() for a in low[1:])
    if program in ("sequelize", "sequelize-cli"):
        return any(a in ("db:drop", "db:migrate:undo:all", "db:seed:undo:all") for a in low)
    if program == "knex":
        return any(a.startswith("migrate:rollback") for a in low) and "--all" in low
    if program in ("typeorm", "typeorm-ts-node-commonjs"):
        return "schema:drop" in low
    if program == "mix":
        return any(a in ("ecto.drop", "ecto.reset", "ecto.rollback") and (a != "ecto.rollback" or "--all" in low) for a in low)
    if program in ("php", "artisan"):
        return any(a in ("migrate:fresh", "migrate:reset", "db:wipe", "migrate:refresh") for a in low)
    if program in ("diesel", "sqlx"):
        return low[:2] in (("database", "reset"), ("database", "drop"), ("migration", "revert")) and (
            low[:2] != ("migration", "revert") or "--all" in low)
    if program in ("supabase",):
        return low[:2] == ("db", "reset")
    if program in ("flyway",):
        return "clean" in low
    if program in ("liquibase",):
        return "dropall" in low or "drop-all" in low
    return False


@applies_to(*_DJANGO_PROGRAMS, "alembic", "flask", "prisma")
def migration_fake(command: Command, step: Step) -> bool:
    program, low = command.program, command.lowered
    if _django(command) and "migrate" in low and any(a in ("--fake", "--fake-initial") for a in low):
        return True
    if program == "alembic" and low[:1] == ("stamp",):
        return True
    if program == "flask" and low[:2] == ("db", "stamp"):
        return True
    if program == "prisma" and low[:2] == ("migrate", "resolve") and "--applied" in low:
        return True
    return False
