"""The rules about checks: security checks turned off (TLS, signatures, protections), checks
skipped (tests, hooks, linters, `|| true`), and code fetched from the network and run."""

from __future__ import annotations

import re

from commons.core.policy.danger.shell import Command
from commons.core.policy.danger.git import git_settings
from commons.core.policy.danger.rule import FETCHERS, RUNS_TEXT, Step, applies_to, env_of


_TLS_ENV = {"NODE_TLS_REJECT_UNAUTHORIZED": {"0"}, "GIT_SSL_NO_VERIFY": None, "PYTHONHTTPSVERIFY": {"0"},
            "CURL_INSECURE": None, "REQUESTS_CA_BUNDLE": {""}, "CURL_CA_BUNDLE": {""}, "SSL_CERT_FILE": {""},
            "NPM_CONFIG_STRICT_SSL": {"false", "0"}, "npm_config_strict_ssl": {"false", "0"},
            "YARN_ENABLE_STRICT_SSL": {"false", "0"}, "PIP_TRUSTED_HOST": None, "UV_INSECURE_HOST": None,
            "GOINSECURE": None, "GONOSUMDB": None, "GONOSUMCHECK": None, "GOSUMDB": {"off"}, "GOFLAGS": None,
            "CARGO_HTTP_CHECK_REVOKE": {"false"}, "CARGO_NET_GIT_FETCH_WITH_CLI": None, "DOCKER_CONTENT_TRUST": {"0"},
            "HELM_INSECURE_SKIP_TLS_VERIFY": None, "KUBECONFIG_INSECURE": None, "AWS_CA_BUNDLE": {""},
            "PIP_BREAK_SYSTEM_PACKAGES": None, "NODE_OPTIONS": None, "ELECTRON_DISABLE_SECURITY_WARNINGS": None,
            "DISABLE_SSL_VERIFY": None, "SSL_VERIFY": {"false", "0", "no"}, "VERIFY_SSL": {"false", "0", "no"}}


def tls_env(command: Command, step: Step) -> bool:
    for name, value in env_of(command, step).items():
        allowed = _TLS_ENV.get(name, _TLS_ENV.get(name.upper(), ()))
        if allowed == ():
            continue
        if name in ("GOFLAGS",):
            if "-insecure" in value:
                return True
            continue
        if name in ("NODE_OPTIONS",):
            if "--use-openssl-ca" not in value and "tls" in value.lower() and "reject" in value.lower():
                return True
            continue
        if name == "PIP_BREAK_SYSTEM_PACKAGES" or name == "CARGO_NET_GIT_FETCH_WITH_CLI":
            continue
        if allowed is None and value.lower() not in ("", "0", "false", "no") or allowed and value.lower() in allowed:
            return True
    return False


_TLS_SETTINGS = re.compile(r"^(?:http\.sslverify|http\.[^.]+\.sslverify|strict-ssl|strict_ssl|enablestrictssl|ssl_verify|"
                           r"sslverify|ssl-verify|verify_ssl|certificates\.[\w.-]+\.cert|disable-tls|secure-http|"
                           r"insecure|check-revoke|http\.check-revoke|global\.trusted-host|trusted-host|"
                           r"install\.trusted-host|tls-verify|insecure-skip-tls-verify)$")


_TLS_CONFIG_PROGRAMS = ("git", "npm", "pnpm", "yarn", "pip", "pip3", "poetry", "conda", "composer", "bundle", "gem", "uv",
                        "helm", "kubectl", "cargo", "bun", "pdm", "mamba", "micromamba")


@applies_to(*_TLS_CONFIG_PROGRAMS)
def tls_config(command: Command, step: Step) -> bool:
    args = [a.lower() for a in command.positional()]
    if command.program in _TLS_CONFIG_PROGRAMS:
        for i, a in enumerate(args):
            key = a.split("=", 1)[0].lstrip("-")
            if _TLS_SETTINGS.match(key):
                value = a.split("=", 1)[1] if "=" in a else (args[i + 1] if i + 1 < len(args) else "")
                if "trusted-host" in key or value in ("false", "0", "no", "off", "true") and (
                        value != "true" or key in ("disable-tls", "insecure", "insecure-skip-tls-verify")):
                    return True
        for c in git_settings(command):
            key, _, value = c.partition("=")
            if _TLS_SETTINGS.match(key) and value in ("false", "0", "no"):
                return True
    return False


def tls_flags(command: Command, step: Step) -> bool:
    program, low = command.program, command.lowered
    if program == "curl" and (command.flag("--insecure", "k")):
        return True
    if program == "wget" and "--no-check-certificate" in low:
        return True
    if program in ("pip", "pip3", "uv", "pipenv", "poetry") and any(a.startswith(("--trusted-host", "--allow-insecure-host"))
                                                                    for a in low):
        return True
    if any(a.startswith(("--insecure-skip-tls-verify", "--insecure-registry", "--disable-tls", "--tls-verify=false",
                         "--skip-tls-verify", "--ssl-no-revoke", "--no-verify-ssl", "--strict-ssl=false",
                         "--insecure")) and not a.startswith("--insecure-skip-tls-verify=false") for a in low) \
            and program not in ("git",):
        return True
    if program in ("invoke-webrequest", "iwr", "invoke-restmethod", "irm") and "-skipcertificatecheck" in low:
        return True
    if program in ("gem", "bundle") and any(a.startswith("http://") for a in low) and ("sources" in low or "source" in low):
        return True
    if program in ("pip", "pip3", "uv", "npm", "pnpm", "yarn") and any(
            a.startswith(("--index-url=http://", "--extra-index-url=http://", "--registry=http://", "http://"))
            for a in low) and ("install" in low or "config" in low or "set" in low):
        return True
    return program in ("python", "python3", "py", "node", "go", "ruby", "deno", "bun") and bool(
        _TLS_OFF_IN_CODE.search(" ".join(command.words)))


_TLS_OFF_IN_CODE = re.compile(r"verify\s*=\s*False|ssl\._create_unverified_context|CERT_NONE|rejectUnauthorized\s*[:=]\s*false|"
                              r"InsecureSkipVerify\s*:\s*true|danger_accept_invalid_certs")
_SIGNATURES_OFF_IN_CONFIG = re.compile(r"\[trusted=yes\]|gpgcheck\s*=\s*0|SigLevel\s*=\s*Never", re.IGNORECASE)


def signatures_off(command: Command, step: Step) -> bool:
    low = command.lowered
    if command.program in ("apt", "apt-get", "aptitude") and any(
            a in ("--allow-unauthenticated", "--force-yes", "--allow-insecure-repositories") for a in low):
        return True
    if command.program in ("dnf", "yum", "zypper", "rpm", "microdnf") and any(
            a in ("--nogpgcheck", "--nosignature", "--nodigest", "--no-gpg-checks", "--nodeps") for a in low):
        return True
    if command.program in ("npm", "pnpm", "yarn") and "--ignore-signatures" in low:
        return True
    if command.program in ("cosign",) and any("insecure" in a for a in low):
        return True
    return bool(_SIGNATURES_OFF_IN_CONFIG.search(" ".join(command.args) + " " + " ".join(command.redirects)))


def protection_off(command: Command, step: Step) -> bool:
    program, low = command.program, command.lowered
    if program in ("pip", "pip3", "uv") and "--break-system-packages" in low:
        return True
    if "PIP_BREAK_SYSTEM_PACKAGES" in env_of(command, step) and program in ("pip", "pip3", "python", "python3", "uv"):
        return True
    if program == "set-executionpolicy" and any(a in ("bypass", "unrestricted") for a in low):
        return True
    if program in ("powershell", "pwsh") and "-executionpolicy" in low and any(a in ("bypass", "unrestricted") for a in low):
        return True
    if program == "setenforce" and low[:1] == ("0",):
        return True
    if program in ("ufw",) and "disable" in low:
        return True
    if program in ("systemctl", "service") and any(a in ("stop", "disable", "mask") for a in low) and any(
            a.startswith(("firewalld", "apparmor", "ufw", "selinux", "auditd", "iptables", "nftables")) for a in low):
        return True
    if program in ("netsh",) and "firewall" in " ".join(low) and ("off" in low or "disable" in low):
        return True
    if program in ("set-mppreference",) and any(a.startswith("-disable") for a in low):
        return True
    if program in ("spctl",) and any(a in ("--master-disable", "--global-disable") for a in low):
        return True
    if program == "csrutil" and "disable" in low:
        return True
    if program == "xattr" and any("com.apple.quarantine" in a for a in low) and ("-d" in low or "-r" in low or "-c" in low):
        return True
    if any(a in ("--no-sandbox", "--disable-web-security", "--disable-setuid-sandbox") for a in low):
        return True
    if program in ("docker", "podman", "nerdctl") and (
            "--privileged" in low or any(a.startswith(("--security-opt=seccomp=unconfined", "--security-opt=apparmor=unconfined",
                                                        "--cap-add=all", "--pid=host")) for a in low)
            or any(low[i:i + 2] == ("--security-opt", "seccomp=unconfined") or low[i:i + 2] == ("--cap-add", "all")
                   for i in range(len(low)))):
        return True
    # Binding a role cluster-wide is how an account gets rights it was refused; a lesson cuts the
    # step before the role's name, so the binding itself is what is classed.
    return program == "kubectl" and command.sub == "create" and "clusterrolebinding" in low


@applies_to("chmod")
def docker_socket(command: Command, step: Step) -> bool:
    return command.program == "chmod" and any("docker.sock" in a for a in command.args)


# --------------------------------------------------------------------------------------------
# Checks skipped

@applies_to("pytest", "py.test", "python", "python3", "jest", "vitest", "mocha", "go", "cargo", "mvn", "mvnw", "gradle",
            "gradlew")
def test_deselect(command: Command, step: Step) -> bool:
    program, args = command.program, command.args
    runner = program in ("pytest", "py.test") or (program in ("python", "python3") and "pytest" in args[:2])
    if runner:
        for i, a in enumerate(args):
            value = a[3:] if a.startswith("-k=") else (args[i + 1] if a == "-k" and i + 1 < len(args) else None)
            if value is not None and re.search(r"\bnot\b", value):
                return True
            marker = a[3:] if a.startswith("-m=") else (args[i + 1] if a == "-m" and i + 1 < len(args) else None)
            if marker is not None and re.search(r"\bnot\b", marker):
                return True  # `-m 'not network'`: the tests carrying the marker left out
            if a.startswith(("--deselect", "--ignore")) and not a.startswith("--ignore-glob=*.") \
                    or a in ("-p", "--continue-on-collection-errors") and i + 1 < len(args) and args[i + 1].startswith("no:"):
                return not (a == "-p" and args[i + 1] in ("no:cacheprovider", "no:randomly", "no:xdist", "no:warnings"))
        return False
    if program in ("jest", "vitest", "mocha") and any(a.startswith(("--testpathignorepatterns", "--exclude", "--ignore",
                                                                     "--modulepathignorepatterns"))
                                                       for a in command.lowered):
        return True
    if program == "go" and command.sub == "test" and any(a.startswith("-skip") for a in args):
        return True
    if program == "cargo" and command.sub in ("test", "nextest") and ("--skip" in args or "--exclude" in args):
        return True
    if program in ("mvn", "mvnw", "./mvnw", "gradle", "gradlew", "./gradlew"):
        low = command.lowered
        return any(a.startswith(("-dskiptests", "-dmaven.test.skip", "-dskipits")) for a in low) or any(
            low[i:i + 2] in (("-x", "test"), ("-x", "check"), ("--exclude-task", "test")) for i in range(len(low)))
    if program in ("npm", "pnpm", "yarn") and any(a in ("--passwithnotests", "--no-tests") for a in command.lowered):
        return False  # a run with no test to run is no skip of a failing one
    return False


@applies_to("true", ":", "exit", "echo")
def or_true(command: Command, step: Step) -> bool:
    if command.joined != "||":
        return False
    words = command.words
    return words[:1] in (("true",), (":",)) or words[:2] == ("exit", "0") or words == ("echo",) or (
        words[:1] == ("echo",) and len(words) <= 4 and command is step.commands[-1])


def exit_zero(command: Command, step: Step) -> bool:
    low = command.lowered
    if any(a in ("--exit-zero", "--exit-zero-even-if-changed", "--no-fail-on-error", "--max-warnings=-1", "--force-exclusion")
           for a in low) and command.program not in ("git",):
        return "--force-exclusion" not in low
    if command.program == "set" and low[:1] == ("+e",):
        return True
    return any(a in ("--continue-on-error", "--keep-going", "--no-bail") for a in low) and command.program in (
        "npm", "pnpm", "yarn", "nx", "turbo", "lerna")


@applies_to("eslint", "ruff", "flake8", "pylint", "mypy", "pyright", "golangci-lint", "rubocop", "shellcheck", "stylelint",
            "cargo")
def lint_off(command: Command, step: Step) -> bool:
    program, args = command.program, command.args
    if program == "eslint":
        for i, a in enumerate(args):
            value = a.split("=", 1)[1] if a.startswith("--rule=") else (args[i + 1] if a == "--rule" and i + 1 < len(args) else "")
            if re.search(r":\s*['\"]?(?:off|0)['\"]?\s*}?$", value):
                return True
        return False
    if program in ("ruff", "flake8", "pylint", "mypy", "pyright", "golangci-lint", "rubocop", "shellcheck", "stylelint"):
        low = command.lowered
        return any(a.startswith(("--ignore=", "--extend-ignore=", "--disable=", "--ignore-errors", "--exclude=")) and
                   re.search(r"=(?:all|e,|e$|\*|.{0,3}$)|ignore-errors", a) for a in low) or "--disable-all" in low
    if program == "cargo" and command.sub == "clippy":
        return any(re.fullmatch(r"-A|--allow", a) for a in args) or any(a.startswith(("-Aclippy", "-Awarnings")) for a in args)
    return False


# --------------------------------------------------------------------------------------------
# Code from the network

def _fetches(command: Command) -> bool:
    if command.program in FETCHERS:
        return True
    text = " ".join(command.words).lower()
    return "downloadstring" in text or "net.webclient" in text or "invoke-webrequest" in text or \
        bool(re.search(r"\b(?:iwr|irm)\b", text)) or bool(re.search(r"\burlopen\(|requests\.get\(", text))


def _fed_fetch(command: Command) -> bool:
    return any(_fetches(c) for c in command.fed)


def pipe_to_shell(command: Command, step: Step) -> bool:
    program = command.program
    if command.words[:1] and command.words[0].startswith(("$(", "`")):  # output run as a command: `$(curl …)`
        return _fed_fetch(command)
    if program not in RUNS_TEXT and not (program in ("sudo",)):
        return False
    if program in ("iex", "invoke-expression") and (_fed_fetch(command) or _fetches(command)):
        return True
    if command.joined in ("|", "|&"):
        pipe = [c for c in step.commands if c.pipeline == command.pipeline and not c.inner == (not command.inner)
                and c is not command]
        earlier = [c for c in step.commands[:step.commands.index(command)] if c.pipeline == command.pipeline
                   and c.inner == command.inner]
        if any(_fetches(c) for c in earlier or pipe):
            return program not in ("python", "python3", "node") or not command.args or command.args[0] in ("-", "-c")
    if _fed_fetch(command) and program in RUNS_TEXT:
        return True  # bash <(curl …), sh -c "$(curl …)", source <(wget …)
    return runs_download(command, step)


def runs_download(command: Command, step: Step) -> bool:
    """``curl -o x.sh URL && sh x.sh``: a file fetched, then run."""
    index = step.commands.index(command)
    saved: set[str] = set()
    for earlier in step.commands[:index]:
        if _fetches(earlier):
            out = earlier.option("-o") or earlier.option("--output") or earlier.option("-outfile") or earlier.option("-O")
            if out:
                saved.add(out.lstrip("./"))
            saved.update(r.lstrip("./") for r in earlier.redirects)
    if not saved:
        return False
    if command.program in RUNS_TEXT:
        return any(a.lstrip("./") in saved for a in command.args[:2])
    return command.words[0].lstrip("./") in saved
