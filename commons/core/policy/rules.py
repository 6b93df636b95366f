"""The scrubber's rules, most specific first: which text is a secret or a personal detail, and
what replaces it. Where two rules claim overlapping text the earlier one wins, so
``GITHUB_TOKEN=ghp_…`` becomes ``GITHUB_TOKEN=<github-token>`` rather than ``<token>``.

Formats follow the public rule sets of gitleaks and detect-secrets (Yelp), written anew and
widened where agent sessions show secrets in other places (a password in prose, a Docker
``auth`` value, ``mysql -pSECRET``). docs/privacy.md says how to add a rule.
"""

from __future__ import annotations

import ipaddress
import re

from commons.core.policy.keyvalue import KeyValueRule, KV_STEMS, KEY_VALUE
from commons.core.policy.personal import NAME_RULES, PERSONAL_RULES
from commons.core.policy.rule import Kind, Marks, Rule, entropy, make_rule, mixed, mixed_value, plain_value, secret_like

__all__ = ["RULES", "Kind", "Marks", "Rule"]

# --------------------------------------------------------------------------------------------
# Addresses, numbers and paths

# "@" is no marker: "user:pw@10.1.4.20" is an address, and package versions have three parts
_VERSION_BEFORE = re.compile(r"(?:\bv|version\s*|[=<>~!]=|[\^~]|\w-|python|node|go)\s*$", re.I)


def _ipv4(m: re.Match[str]) -> bool:
    octets = [int(o) for o in m.group("v").split(".")]
    if all(o < 10 for o in octets):
        return False  # 1.2.3.4 and 8.8.8.8: a version, or a public resolver that names no one
    if octets[0] in (0, 127, 255):
        return False  # 0.0.0.0, loopback and netmasks: the same on every machine
    if octets[:3] in ([192, 0, 2], [198, 51, 100], [203, 0, 113]):
        return False  # RFC 5737 documentation ranges: examples, never anyone's host
    before = m.string[max(0, m.start() - 12):m.start()]
    return not _VERSION_BEFORE.search(before)


def _ipv6(m: re.Match[str]) -> bool:
    raw = m.group("v").split("%")[0]
    if not any(c.isdigit() for c in raw) or sum(1 for g in raw.split(":") if g) < 2:
        return False  # "dead::beef", "a[::2]": code, not an address
    try:
        addr = ipaddress.IPv6Address(raw)
    except ValueError:
        return False  # 10:15:30 is a time, aa:bb:cc a fragment
    return not (addr.is_loopback or addr.is_unspecified)


def _phone(m: re.Match[str]) -> bool:
    v = m.group("v")
    if (re.fullmatch(r"\+\d+\.\d+", v) or re.match(r"\+\d{4}-\d\d-\d\d", v)
            or m.string.startswith(("j", "e", "E"), m.end())):
        return False  # +4.0614962j, +1.5e10: numbers in code and output
    if v.startswith("00") or not v.strip("0 -"):
        return False  # "0000 0000 0000": a dump, not a number anyone answers
    return 8 <= sum(c.isdigit() for c in v) <= 15


_NOT_MAIL_TLDS = frozenset("png jpg jpeg gif svg webp js ts py css json lock md txt html".split())


def _email(m: re.Match[str]) -> bool:
    local, _, domain = m.group("v").partition("@")
    return local.lower() != "git" and domain.rsplit(".", 1)[-1].lower() not in _NOT_MAIL_TLDS


_NOT_HOSTS = frozenset("""latest next beta alpha canary rc lts stable main master head dev edge nightly
    types berry experimental insiders preview release legacy current default none""".split())


def _identity(m: re.Match[str]) -> bool:
    user, _, host = m.group("v").partition("@")
    if m.group("v") == "user@host" and m.start() > 0 and m.string[m.start() - 1] == "<":
        return False  # the placeholder itself
    if user in ("git", "hg", "svn") or host.lower() in _NOT_HOSTS or re.fullmatch(r"(?i)v?\d.*|sha\d+", host):
        return False
    return not m.string.startswith(("{", "("), m.end())


_CODE_NAMES = frozenset("threading self this window thread asyncio contextvars werkzeug flask "
                        "django request g app ctx version parsed prospective first last lower upper "
                        "value obj config settings spec item node py path os".split())
_CODE_AFTER = re.compile(r"\s*(?:is\b|import\b|==|!=|=[^=]|\(|\)|,|\]|\[)|:(?!\d)")


_PRIVATE_ZONES = frozenset({"internal", "corp", "lan", "intranet", "priv", "private"})


def _internal_host(m: re.Match[str]) -> bool:
    labels = m.group("v").split(".")
    if labels[0].lower() in _CODE_NAMES or any("_" in label for label in labels):
        return False  # host names have no underscores; "version.local" is an attribute
    if re.search(r"\b(?:from|import)\s+$", m.string[max(0, m.start() - 8):m.start()]):
        return False  # "from hypothesis.internal import x": a module
    code = _CODE_AFTER.match(m.string, m.end())
    if code and code.group(0) == ":" and _PRIVATE_ZONES & {label.lower() for label in labels[1:]}:
        return not m.string.startswith(("\n", ":"), m.end() + 1)  # "lookup api.prod.internal: no such host"
    return not code


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z_.]*")  # no digits: a name in code, not a secret
_SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")


def _prose_secret(m: re.Match[str]) -> Kind | bool:
    value = m.group("v")
    if value.upper() in ("YES", "NO") or plain_value(value):
        return False  # MySQL's "(using password: YES)" says whether one was given, not which
    if "." in value and _IDENTIFIER.fullmatch(value):
        return False  # "token is Token.Name.Function": code
    if not (m.group("q") or secret_like(value)):
        return False
    said = m.group(0).lower()
    return Kind.PASSWORD if "pass" in said else Kind.TOKEN if "token" in said else Kind.SECRET


def _bearer(m: re.Match[str]) -> bool:
    value = m.group("v").rstrip("})]")
    if plain_value(value) or _SNAKE.fullmatch(value):
        return False  # "'Authorization': v4auth_header}" names a variable
    return mixed(value) or entropy(value) >= 3.0


def _not_plain(m: re.Match[str]) -> bool:
    return not plain_value(m.group("v"))


def _not_plain_any(m: re.Match[str]) -> bool:
    value = next(v for k, v in m.groupdict().items() if k.startswith("v") and v is not None)
    return not plain_value(value)


# --------------------------------------------------------------------------------------------
# The rules, most specific first

# Every repeat is bounded (at most 512): a rejected match is retried one character on, so an
# unbounded run ("sk-sk-sk-…") would make the scan quadratic in the run's length.
_V = r"(?P<v>{})"
RULES: tuple[Rule, ...] = (
    make_rule("pem-private-key", Kind.PRIVATE_KEY,
          r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----.*?"
          r"(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|(?=\"\s*[,}])|\Z)",
          "private", flags=re.S, before=40, after=None),
    make_rule("github", Kind.GITHUB_TOKEN,
          r"\b(?:gh[pousr]_[A-Za-z0-9]{20,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
          anchors=(r"gh[pousr]_", r"github_pat_")),
    make_rule("gitlab", Kind.GITLAB_TOKEN,
          r"\bgl(?:pat|dt|rt|ptt|cbt|soat|ft|imt|agent|oas)-[A-Za-z0-9_\-]{20,512}",
          anchors=(r"gl(?:pat|dt|rt|ptt|cbt|soat|ft|imt|agent|oas)-",)),
    make_rule("aws-access-key-id", Kind.AWS_KEY,
          r"(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA|A3T[A-Z0-9])"
          r"[A-Z0-9]{16}(?![A-Z0-9])", anchors=(r"A(?:KIA|SIA|BIA|CCA|GPA|IDA|ROA|IPA|NPA|NVA|PKA|3T)[A-Z0-9]{16}",)),
    make_rule("gcp-api-key", Kind.GCP_KEY, r"\bAIza[0-9A-Za-z_\-]{35}(?![\w\-])", anchors=(r"AIza",)),
    make_rule("slack-webhook", Kind.SLACK_WEBHOOK,
          r"hooks\.slack\.com/(?:services|workflows|triggers)/" + _V.format(r"[A-Za-z0-9_/\-]{16,512}"),
          "hooks.slack.com"),
    make_rule("slack-token", Kind.SLACK_TOKEN,
          r"\bxox[abposre]-[A-Za-z0-9\-]{10,512}|\bxapp-\d-[A-Za-z0-9\-]{10,512}", anchors=(r"x(?:ox[abposre]|app)-",)),
    make_rule("stripe", Kind.STRIPE_KEY, r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,512}|\bwhsec_[A-Za-z0-9]{20,512}",
          "_live_ _test_ whsec_"),
    make_rule("anthropic", Kind.ANTHROPIC_KEY, r"\bsk-ant-[A-Za-z0-9_\-]{16,512}", "sk-"),
    make_rule("openai", Kind.OPENAI_KEY,
          r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_\-]{20,512}", "sk-",
          lambda m: mixed(m.group(0))),  # a long hyphenated name is not a key
    make_rule("huggingface", Kind.HUGGINGFACE_TOKEN, r"\b(?:hf_|api_org_)[A-Za-z0-9]{30,512}\b", anchors=(r"hf_", r"api_org_")),
    make_rule("npm", Kind.NPM_TOKEN, r"\bnpm_[A-Za-z0-9]{30,512}\b", "npm_"),
    make_rule("pypi", Kind.PYPI_TOKEN, r"\bpypi-AgE[A-Za-z0-9_\-]{20,512}|\bpypi-[A-Za-z0-9_\-]{50,512}", "pypi-"),
    make_rule("docker-hub", Kind.DOCKER_TOKEN, r"\bdckr_(?:pat|oat)_[A-Za-z0-9_\-]{20,512}", "dckr_"),
    make_rule("sendgrid", Kind.SENDGRID_KEY, r"\bSG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}", anchors=(r"SG\.",)),
    make_rule("twilio", Kind.TWILIO_KEY, r"\b(?:SK|AC)[0-9a-fA-F]{32}\b",
          anchors=(r"SK[0-9a-fA-F]{8}", r"AC[0-9a-fA-F]{8}")),
    make_rule("vendor-token", Kind.TOKEN,
          r"\b(?:ya29\.[A-Za-z0-9_\-]{20,512}|dop_v1_[a-f0-9]{64}|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"
          r"|glc_[A-Za-z0-9+/]{32,512}|lin_api_[A-Za-z0-9]{40}|sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,512}"
          r"|AGE-SECRET-KEY-1[0-9A-Z]{58})",
          "ya29. dop_v1_ shp glc_ lin_api_ sq0 age-secret-key-"),
    make_rule("jwt", Kind.JWT, r"\beyJ[A-Za-z0-9_\-]{8,512}\.[A-Za-z0-9_\-]{8,512}\.[A-Za-z0-9_\-]*", anchors=(r"eyJ",)),
    make_rule("docker-auth", Kind.DOCKER_AUTH,
          r"""(?i)["']?(?:auth|identitytoken|registrytoken)["']?\s*:\s*["']"""
          + _V.format(r"[A-Za-z0-9+/=_\-.]{8,512}") + "[\"']",
          anchors=(r"auth[\"']?\s*:\s*[\"']", r"oken[\"']?\s*:\s*[\"']"), before=16, after=600),
    make_rule("azure-key", Kind.AZURE_KEY,
          r"(?i)\b(?:AccountKey|SharedAccessKey|SharedSecret)\s*=\s*" + _V.format(r"[A-Za-z0-9+/=]{16,512}")
          + r"|\bSharedAccessSignature\s*=\s*(?P<v_sas>[^;\s\"']+)|[?&]sig=(?P<v_sig>[A-Za-z0-9%+/=]{16,512})",
          "accountkey sharedaccess sharedsecret sig="),
    make_rule("aws-secret-access-key", Kind.AWS_SECRET,
          r"(?i)(?:aws[\w .\-]{0,20}?secret|secret[ _\-]?access[ _\-]?key)[\w .\-\[\]\"']{0,24}?"
          r"[=:\s]\s*[\"']?" + _V.format(r"[A-Za-z0-9/+]{40}") + r"(?![A-Za-z0-9/+=])",
          "secret", mixed_value, before=30, after=200),
    make_rule("url-credentials", Kind.PASSWORD,
          r"\b[a-z][a-z0-9+.\-]*://[^\s/:@<>\"']*:" + _V.format(r"[^\s/<>\"']+") + "@", "://",
          _not_plain),
    make_rule("authorization-header", Kind.TOKEN,
          r"(?i)\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?"
          r"(?:(?:bearer|basic|token|digest|bot|apikey|sso-key|negotiate)\s+)?"
          + _V.format(r"[^\s\"',<]{6,512}"), "authorization", _bearer, before=8),
    make_rule("bearer", Kind.TOKEN, r"(?i)\bbearer\s+" + _V.format(r"[A-Za-z0-9._~+/\-]{12,512}=*"),
          "bearer", _bearer),
    make_rule("mysql-attached-password", Kind.PASSWORD,
          r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mariadb|mariadb-dump)\b[^\n|;&]*?\s-p"
          r"(?:(?P<q>['\"])(?P<v_q>[^'\"\n]{1,512})(?P=q)|" + _V.format(r"[^\s'\"]+") + ")", "mysql mariadb",
          after=2000),
    # passwords other tools take on the command line: `redis-cli -a X`, `ldapsearch -w X`,
    # `zip -P X`, `smbclient -U user%X`, `openssl … -passout pass:X`, `htpasswd -b file user X`,
    # `rabbitmqctl add_user name X`, `mongosh -p X`, and a password piped into `sudo -S`
    make_rule("cli-password-flag", Kind.PASSWORD,
          r"\b(?:redis-cli\b[^\n|;&]*?\s(?:-a|--pass)|ldap(?:search|add|modify|delete|passwd|whoami|compare)\b"
          r"[^\n|;&]*?\s-w|(?:zip|unzip)\b[^\n|;&]*?\s-P|mongo(?:sh|dump|restore|import|export)?\b[^\n|;&]*?\s-p"
          r"|(?:sshpass|keytool|jarsigner)\b[^\n|;&]*?\s-(?:p|storepass|keypass))\s+(?P<q>['\"]?)"
          + _V.format(r"[^\s'\"]{1,512}") + r"(?P=q)", "redis-cli ldap zip mongo sshpass keytool jarsigner",
          _not_plain, after=600),
    make_rule("cli-password-attached", Kind.PASSWORD,
          r"\b(?:7z|7za|7zz|unrar|rar)\b[^\n|;&]*?\s-p" + _V.format(r"[^\s'\"]{1,512}")
          + r"|-pass(?:in|out)?\s+['\"]?pass:" + _V.format(r"[^\s'\"]{1,512}").replace("<v>", "<v_o>")
          + r"|\b(?:smbclient|rpcclient|smbmap|smbcacls)\b[^\n|;&]*?\s-U\s+['\"]?[^\s%'\"]+%"
          + _V.format(r"[^\s'\"]{1,512}").replace("<v>", "<v_s>"),
          "7z rar pass: smbclient rpcclient smbmap smbcacls", _not_plain_any, after=600),
    make_rule("cli-password-positional", Kind.PASSWORD,
          r"\bhtpasswd\s+(?:-[a-zA-Z]+\s+)*-[a-zA-Z]*b[a-zA-Z]*\s+(?:-[a-zA-Z]+\s+)*\S+\s+\S+\s+['\"]?"
          + _V.format(r"[^\s'\"]{1,512}")
          + r"|\brabbitmqctl\s+(?:add_user|change_password)\s+\S+\s+['\"]?" + _V.format(r"[^\s'\"]{1,512}").replace("<v>", "<v_r>"),
          "htpasswd rabbitmqctl", _not_plain_any, after=300),
    make_rule("sudo-stdin", Kind.PASSWORD,
          r"\b(?:echo|printf)\s+(?:-[en]+\s+)?(?:'%s\\n'\s+)?(?P<q>['\"]?)" + _V.format(r"[^\s'\"|]{1,512}")
          + r"(?P=q)\s*\|\s*sudo\s+(?:-\w+\s+)*-\w*S"
          + r"|\bsudo\s+(?:-\w+\s+)*-\w*S\b[^\n|;&]*?<<<\s*(?P<q2>['\"]?)" + _V.format(r"[^\s'\"]{1,512}").replace("<v>", "<v_h>")
          + r"(?P=q2)", "sudo", _not_plain_any, before=300, after=600),
    # "docker login -u ci -p X", "helm registry login … -p X": after "login", -p takes the
    # password (for mysql a spaced -p X names a database, so that stays with its own rule)
    make_rule("login-p-flag", Kind.PASSWORD,
          r"\blogin\b[^\n|;&]{0,200}?\s-p\s+['\"]?" + _V.format(r"[^\s'\"]{1,512}"), "login", _not_plain,
          after=300),
    make_rule("sshpass", Kind.PASSWORD, r"\bsshpass\s+-p\s*['\"]?" + _V.format(r"[^\s'\"]+"), "sshpass"),
    make_rule("curl-user", Kind.PASSWORD,
          r"\b(?:curl|wget|http)\b[^\n|;]*?\s(?:-u|--user)\s*['\"]?[^\s:'\"]+:" + _V.format(r"[^\s'\"@]+"),
          "curl wget", _not_plain, after=2000),
    make_rule("netrc", Kind.PASSWORD, r"\bmachine\s+\S+\s+login\s+\S+\s+password\s+" + _V.format(r"\S+"),
          "machine", _not_plain,
          after=600),
    KeyValueRule("key-value", Kind.SECRET, KEY_VALUE, KV_STEMS),
    make_rule("password-in-prose", Kind.PASSWORD,
          r"(?i)\b(?:(?:password|passphrase|passcode|secret|token|api key|access key)\s+"
          r"(?:is|was|is now|is set to|was set to|should be|to|of|as|->)"
          r"|(?:using|with|use|try)\s+(?:the\s+)?(?:password|passphrase)\s*:?)\s+"
          r"(?P<q>[\"'`]?)" + _V.format(r"[^\s\"'`]+?") + r"(?P=q)(?=[.,;:)]?(?:\s|$))",
          "password passphrase passcode", _prose_secret, before=24, after=200,
          # anchors open with a literal, which the regex engine finds fast
          anchors=tuple(rf"{w}\s+(?:is|was|should|to|of|as|->)\s" for w in ("ecret", "oken", "key", "Key"))),
    make_rule("email", Kind.EMAIL,
          _V.format(r"\b[A-Za-z0-9._%+\-]+@(?:[A-Za-z0-9\-]+\.)+[A-Za-z]{2,512}\b"), "@", _email),
    *NAME_RULES,
    make_rule("user-at-host", Kind.USER_AT_HOST,
          r"(?<![\w.@\-])" + _V.format(r"[a-z_][a-z0-9_\-]{0,31}@[A-Za-z0-9][\w\-]*(?:\.[\w\-]+)*")
          + r"(?=:\s?[~/])", "@"),
    # a git identity or an ssh target: "kwame@kwame-ThinkPad", "ssh tsato@devbox-07"; not a package
    # at a version or tag (react@18, pnpm@latest, actions/checkout@v4) nor git@ of a forge
    make_rule("user-at-host-identity", Kind.USER_AT_HOST,
          r"(?<![\w.@\-/+:])" + _V.format(r"[a-z_][a-z0-9_.\-]{0,31}@[A-Za-z][\w\-]{1,62}")
          + r"(?![\w\-@/]|\.[A-Za-z0-9])", "@", _identity),
    make_rule("home-path", Kind.HOME,
          r"(?<![\w.\-])" + _V.format(r"/(?:home|Users|var/home)/[^/\s'\"`:;,()<>\[\]{}|*?\\]+"),
          anchors=(r"/home/", r"/Users/"), after=300),
    make_rule("home-path-windows", Kind.HOME,
          _V.format(r"(?i:\b[a-z]:(?:\\\\|\\|/)(?:users|documents and settings)(?:\\\\|\\|/))"
                    r"[^\\/\s'\"`:;,<>|*?]+"),
          anchors=(r":[\\/]+(?:[Uu]sers|Documents and Settings)[\\/]",), before=24, after=300),
    make_rule("home-path-tilde", Kind.HOME, r"(?<![\w~/])" + _V.format(r"~[a-z_][a-z0-9_\-]*") + r"(?=/)",
          anchors=(r"~[a-z_]",), after=64),
    *PERSONAL_RULES,
    make_rule("ipv6", Kind.IP,
          r"(?<![\w:.])" + _V.format(r"(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?:%[\w.]+)?")
          + r"(?![\w:])", "", _ipv6,
          # "::" or four colons: a time (10:15:30) has two and never wakes the rule
          anchors=(r"::", r":[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:"), after=60),
    make_rule("ipv4", Kind.IP,
          r"(?<![\w.])" + _V.format(r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}")
          + r"(?!\.?\d|\w)", "", _ipv4, anchors=(r"\.\d{1,3}\.\d{1,3}\.\d",), after=20),
    make_rule("phone", Kind.PHONE,
          r"(?<![\w+.\-/])" + _V.format(
              r"\+[1-9]\d{0,2}(?:[ .\-]?\(?\d{1,4}\)?){2,5}"
              r"|\(\d{3}\)[ ]?\d{3}[ .\-]\d{4}|\d{3}-\d{3}-\d{4}|\d{3}\.\d{3}\.\d{4}"
              r"|0\d{2,4}[ \-]\d{3,4}[ \-]\d{3,4}")  # national: 020 7946 0958, 030-901820-12
          + r"(?![\w.\-]?\d)", "", _phone,
          anchors=(r"\+[1-9]", r"\(\d{3}\) ?\d{3}[ .\-]\d{4}", r"-\d{3}-\d{4}", r"\.\d{3}\.\d{4}",
                   r"0\d{2,4}[ \-]\d{3,4}[ \-]\d{3,4}"), after=30),
    # "db01.internal.example.com", "artifactory.corp.globex.net": a public domain's internal zone
    make_rule("internal-subdomain", Kind.HOST,
          r"(?i)(?<![\w.\-@])(?<![\w.\-]/)" + _V.format(
              r"(?:[a-z0-9](?:[a-z0-9\-]{0,61}[a-z0-9])?\.)+(?:internal|corp|intranet|lan|priv|private|local)"
              r"(?:\.[a-z0-9](?:[a-z0-9\-]{0,61}[a-z0-9])?)*\.(?:com|net|org|io|dev|app|cloud|tech|ai|co|biz|info"
              r"|eu|us|uk|de|fr|es|it|nl|be|ch|at|se|no|dk|fi|pl|cz|pt|ie|ru|ua|cn|jp|kr|in|br|mx|ar|au|nz|ca|za"
              r"|sg|hk|tw|il|tr|gr|ro|hu)") + r"(?![\w\-]|\.[a-z])", "",
          _internal_host, anchors=(r"\.(?:internal|corp|intranet|lan|priv|private|local)\.[a-z]",)),
    make_rule("internal-host", Kind.HOST,
          r"(?i)(?<![\w.\-@])(?<![\w.\-]/)" + _V.format(
              r"(?:[a-z0-9](?:[a-z0-9\-]{0,61}[a-z0-9])?\.)+"
              r"(?:internal|local|lan|intranet|corp|localdomain|home\.arpa)")
          + r"(?![\w\-(]|\.[a-z])", "",
          _internal_host, anchors=(r"\.(?:internal|local|lan|intranet|corp|home\.arpa)\b",)),
)
