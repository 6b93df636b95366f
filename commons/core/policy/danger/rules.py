"""The rule table: which steps destroy, rewrite, raise, disable, skip, fetch and run, or reconfigure.

Each `Rule` has an id (``git.push-force``), a `Kind`, the plain sentence of what the step destroys
or disables (what a person reads beside the lesson), and a test over one `Command` of the step and
the step as a whole (`Step`). The table is read in order and the first rule that matches names the
danger, so a rule for the worse reading of a command comes before the milder one
(``git config --global http.sslVerify false`` turns TLS off before it changes global configuration).

The safe look-alikes are decided here too, beside the rule they differ from:

- ``rm -rf`` of a folder a tool makes again (``node_modules``, ``.venv``, ``dist``, ``build``,
  ``target``, a cache, a temporary folder) is safe; of anything else (``.``, ``~``, ``/``, ``src``,
  a glob, a variable) it destroys data. ``Remove-Item -Recurse -Force`` and ``rd /s /q`` the same.
- ``git push --force`` is always dangerous: it replaces the remote branch with the local one, and
  commits others pushed meanwhile are lost. ``--force-with-lease`` (and ``--force-if-includes``)
  refuses when the remote moved since it was fetched: safe on a branch the step names that is not
  a shared one (``main``, ``master``, ``trunk``, ``develop``, ``release…``, ``production``); with no
  branch named, or a shared one, it still rewrites shared history and is dangerous.
- ``git reset --hard`` destroys uncommitted work; ``--soft`` and ``--mixed`` keep it.
- ``docker rm`` of containers it names is safe; of every container (``$(docker ps -aq)``) it is not.
  ``docker system prune`` is dangerous with ``-a`` or ``--volumes``; ``docker compose down`` only
  with ``-v``.
- ``sudo`` to install a system package (``apt-get install``) or to manage a service is what sudo is
  for; ``sudo`` running a language's package manager, a shell or a downloaded script is not.
"""

from __future__ import annotations

import re

from commons.core.policy.danger.checks import (
    docker_socket, exit_zero, lint_off, or_true, pipe_to_shell, protection_off, signatures_off, test_deselect,
    tls_config, tls_env, tls_flags,
)
from commons.core.policy.danger.git import (
    branch_delete, clean, discard, history_rewrite, no_sign, no_verify, push_force, reset_hard,
)
from commons.core.policy.danger.infra import (
    compose_down, docker_prune, drop_tools, helm_uninstall, kubectl_delete, migration_destroys, migration_fake,
    sql, terraform, terraform_skip,
)
from commons.core.policy.danger.rule import Kind, Rule, RuleIndex
from commons.core.policy.danger.system import (
    elevate, global_config, owns_system, rc_files, rm_data, rm_test, rm_tree, sudo_tools, sudoers, world_writable,
)


RULES: tuple[Rule, ...] = (
    Rule("fs.rm-tree", Kind.DESTROYS_DATA, "it deletes a whole folder tree that no tool can make again", rm_tree),
    Rule("fs.rm-data", Kind.DESTROYS_DATA, "it deletes a database, the repository's history or every file of a folder",
         rm_data),
    Rule("fs.rm-test", Kind.SKIPS_CHECK, "it deletes the failing test instead of making it pass", rm_test),
    Rule("db.sql-destroys", Kind.DESTROYS_DATA, "it drops or empties tables, and the rows in them are gone", sql),
    Rule("db.drop", Kind.DESTROYS_DATA, "it drops a whole database", drop_tools),
    Rule("db.migration-destroys", Kind.DESTROYS_DATA,
         "it drops and recreates the database or unapplies its migrations, and the data in it is gone", migration_destroys),
    Rule("db.migration-fake", Kind.SKIPS_CHECK,
         "it marks migrations applied without running them, so the schema no longer matches what the code expects",
         migration_fake),
    Rule("docker.prune", Kind.DESTROYS_DATA,
         "it deletes every stopped container, unused image or volume, and the data kept in volumes", docker_prune),
    Rule("docker.compose-down-volumes", Kind.DESTROYS_DATA, "it deletes the project's volumes and the data in them",
         compose_down),
    Rule("k8s.delete", Kind.DESTROYS_DATA,
         "it deletes cluster resources (a namespace, volumes, everything of a kind) and what they held", kubectl_delete),
    Rule("helm.uninstall", Kind.DESTROYS_DATA, "it removes a release and the resources it made from the cluster",
         helm_uninstall),
    Rule("terraform.destroy", Kind.DESTROYS_DATA,
         "it destroys infrastructure or drops it from the state, and what it held is gone", terraform),
    Rule("terraform.skip-review", Kind.SKIPS_CHECK,
         "it applies changes without the plan being reviewed, or without the state lock others rely on", terraform_skip),
    Rule("git.push-force", Kind.REWRITES_HISTORY,
         "it overwrites the remote branch's history, and commits others pushed there are lost", push_force),
    Rule("git.reset-hard", Kind.DESTROYS_DATA, "it throws away every uncommitted change in the working tree", reset_hard),
    Rule("git.clean", Kind.DESTROYS_DATA, "it deletes every untracked file, and they cannot be recovered", clean),
    Rule("git.discard", Kind.DESTROYS_DATA, "it throws away uncommitted or stashed changes", discard),
    Rule("git.branch-force-delete", Kind.DESTROYS_DATA, "it deletes a branch even when its commits were merged nowhere",
         branch_delete),
    Rule("git.rewrite-history", Kind.REWRITES_HISTORY, "it rewrites or prunes the repository's history", history_rewrite),
    Rule("git.no-verify", Kind.SKIPS_CHECK, "it skips the repository's hooks, so what they check (tests, lint, secrets) "
         "is not checked", no_verify),
    Rule("git.no-sign", Kind.DISABLES_SECURITY, "it turns off commit signing, so commits no longer prove their author",
         no_sign),
    Rule("tls.env", Kind.DISABLES_SECURITY,
         "it turns off certificate or checksum verification, so a forged server or package is accepted", tls_env),
    Rule("tls.config", Kind.DISABLES_SECURITY,
         "it turns off TLS certificate verification in the tool's configuration, so a forged server is accepted",
         tls_config),
    Rule("tls.flag", Kind.DISABLES_SECURITY,
         "it skips TLS certificate verification, so a forged server or package is accepted", tls_flags),
    Rule("pkg.signatures-off", Kind.DISABLES_SECURITY,
         "it installs packages without checking their signatures", signatures_off),
    Rule("sec.protection-off", Kind.DISABLES_SECURITY,
         "it turns off a protection (the system's Python, the execution policy, a sandbox, a firewall, SELinux)",
         protection_off),
    Rule("net.pipe-to-shell", Kind.RUNS_NETWORK_CODE,
         "it runs a script fetched from the network, unread, with the user's rights", pipe_to_shell),
    Rule("fs.world-writable", Kind.RAISES_PRIVILEGES,
         "it makes files writable by every user (or setuid), so anyone on the machine can change what runs",
         world_writable),
    Rule("fs.docker-socket", Kind.RAISES_PRIVILEGES, "it gives every user root through the Docker socket", docker_socket),
    Rule("fs.own-system", Kind.RAISES_PRIVILEGES, "it takes ownership of system folders", owns_system),
    Rule("priv.sudo-tool", Kind.RAISES_PRIVILEGES,
         "it runs a package manager, a shell or a project's script as root, and their install scripts with it",
         sudo_tools),
    Rule("priv.sudoers", Kind.RAISES_PRIVILEGES, "it grants administrator rights", sudoers),
    Rule("priv.elevate", Kind.RAISES_PRIVILEGES, "it starts a shell or program as another, more privileged user", elevate),
    Rule("check.deselect", Kind.SKIPS_CHECK, "it leaves the failing tests out of the run instead of making them pass",
         test_deselect),
    Rule("check.or-true", Kind.SKIPS_CHECK, "it hides the failure: the step counts as passed whatever happened", or_true),
    Rule("check.exit-zero", Kind.SKIPS_CHECK, "it makes a checker report success whatever it found", exit_zero),
    Rule("check.lint-off", Kind.SKIPS_CHECK, "it turns off the lint rule that failed instead of meeting it", lint_off),
    Rule("config.rc-file", Kind.GLOBAL_CONFIG,
         "it changes a configuration file outside the project (a shell profile, a tool's user config, /etc)", rc_files),
    Rule("config.global", Kind.GLOBAL_CONFIG,
         "it changes a tool's configuration for every project of this user (or the whole machine)", global_config),
)
# A command meets the rules of its program and those of any program (each test declares the
# programs it can be true of, `applies_to`), not the ~40 of the table: the same answers, fewer asked.
INDEX = RuleIndex(RULES)


# --------------------------------------------------------------------------------------------
# Edits: what the text written to a file turns off

EDIT_RULES: tuple[tuple[str, Kind, str, re.Pattern[str], re.Pattern[str] | None], ...] = (
    ("edit.tls-off", Kind.DISABLES_SECURITY, "it turns off TLS certificate verification in the code or its settings",
     re.compile(r"verify\s*=\s*False|rejectUnauthorized\s*[:=]\s*false|NODE_TLS_REJECT_UNAUTHORIZED\s*[=:]\s*['\"]?0|"
                r"ssl[vV]erify\s*[=:]\s*false|strict-ssl\s*[=:]\s*false|InsecureSkipVerify\s*:\s*true|"
                r"_create_unverified_context|CERT_NONE|danger_accept_invalid_certs\(true\)|trusted-host|"
                r"insecure-skip-tls-verify|ssl_verify\s*[:=]\s*(?:false|0)|check_hostname\s*=\s*False|"
                r"\"insecure-registries\"|NoCheckCertificate|verify_ssl\s*[:=]\s*(?:false|False)|PYTHONHTTPSVERIFY\s*=\s*0"),
     None),
    ("edit.skip-test", Kind.SKIPS_CHECK, "it marks the failing test to be skipped instead of making it pass",
     re.compile(r"@pytest\.mark\.(?:skip|xfail)|@unittest\.skip|\bpytest\.skip\(|\b(?:it|test|describe)\.(?:skip|todo)\(|"
                r"\bx(?:it|test|describe)\(|#\[ignore\]|\bt\.Skip(?:Now|f)?\(|@Disabled\b|@Ignore\b|\[Ignore\]|"
                r"\bskip\s*\(\s*['\"]|\.skip\b\s*=\s*true"),
     None),
    ("edit.type-ignore", Kind.SKIPS_CHECK, "it silences the type checker on the line that failed",
     re.compile(r"#\s*type:\s*ignore|#\s*pyright:\s*ignore|@ts-ignore|@ts-nocheck|@ts-expect-error|#\s*mypy:\s*ignore-errors|"
                r"ignore_errors\s*=\s*[Tt]rue|\"strict\"\s*:\s*false|noImplicitAny\"\s*:\s*false|"
                r"\"skipLibCheck\"\s*:\s*true"),
     None),
    ("edit.lint-off", Kind.SKIPS_CHECK, "it turns off the lint rule that failed instead of meeting it",
     re.compile(r"eslint-disable|#\s*noqa|#\s*pylint:\s*disable|#\[allow\(|//\s*nolint|rubocop:disable|"
                r"#\s*nosec|NOLINT|@SuppressWarnings|#\s*ruff:\s*noqa|biome-ignore|prettier-ignore|"
                r"['\"][@\w/-]+['\"]\s*:\s*['\"]?(?:off|0)['\"]?|^\s*[@\w/-]+\s*=\s*['\"]?off['\"]?\s*$"),
     re.compile(r"\.(?:py|pyi|js|jsx|ts|tsx|mjs|cjs|rs|go|rb|java|kt|json|ya?ml|toml|cfg|ini)$|eslintrc|eslint\.config|"
                r"^<path>$")),
    ("edit.ci-skip", Kind.SKIPS_CHECK, "it lets the failing step pass in CI whatever happened",
     re.compile(r"continue-on-error\s*:\s*true|allow_failure\s*:\s*true|\|\|\s*true\b|--exit-zero"), None),
    ("edit.sandbox-off", Kind.DISABLES_SECURITY, "it turns off a sandbox or a security setting",
     re.compile(r"--no-sandbox|nodeIntegration\s*:\s*true|contextIsolation\s*:\s*false|webSecurity\s*:\s*false|"
                r"privileged\s*:\s*true|allowPrivilegeEscalation\s*:\s*true|seccomp[=:]\s*unconfined|"
                r"DEBUG\s*=\s*True|ALLOWED_HOSTS\s*=\s*\[\s*['\"]\*['\"]\s*\]|CORS_ORIGIN_ALLOW_ALL\s*=\s*True|"
                r"csrf_exempt|SECURE_SSL_REDIRECT\s*=\s*False|sandbox\s*=\s*false"),
     None),
)
SHELLISH = re.compile(r"\.(?:sh|bash|zsh|ps1|bat|cmd)$|(?:^|/)(?:Makefile|Dockerfile|Justfile|Taskfile\.ya?ml)$|"
                       r"\.github/workflows/|\.gitlab-ci\.ya?ml$|package\.json$")
