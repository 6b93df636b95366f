"""The scrubber's surface (commons.core.policy.scrubber): placeholders, the syntaxes secrets come in, the
look-alikes it keeps, cutting after scrubbing, and the gate at signing."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commons.core.policy import observation as safety
from commons.core.policy.scrubber import (Finding, Kind, ScrubbedTextRequired, clip, findings, is_clean,
                                looks_private, require_clean, scrub)

SENDGRID = "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"


# --- the regressions of issue 15: each once reached a peer or a shared lesson ---------------

def test_docker_auth_from_a_failed_push_is_scrubbed():
    text = ('$ docker push registry.acme.io/api:1.4.2\ndenied: requested access to the resource '
            'is denied\n$ cat ~/.docker/config.json\n{"auths": {"registry.acme.io": '
            '{"auth": "ZGVwbG95Ym90OmRDWFJBa2NjSjExSEt3"}}}')
    out = scrub(text)
    assert "ZGVwbG95Ym90" not in out
    assert '"auth": "<docker-auth>"' in out
    assert "registry.acme.io/api:1.4.2" in out  # what failed still reads


def test_mysql_password_in_the_command_is_scrubbed_and_the_error_kept():
    text = ("$ mysql -u root -pMy$qlR00tPw shop\nERROR 1045 (28000): Access denied for user "
            "'root'@'localhost' (using password: YES)")
    out = scrub(text)
    assert "My$qlR00tPw" not in out
    assert "-p<password>" in out
    assert "(using password: YES)" in out  # says that a password was given, not which


def test_using_password_prose_with_a_value_is_scrubbed():
    assert scrub("login failed using password Xk29!mq for admin") == \
        "login failed using password <password> for admin"


def test_stripe_live_key_with_underscores_is_scrubbed():
    assert scrub("Invalid API Key provided: sk_live_g4RImaBXZBMKST9OPE261yEz") == \
        "Invalid API Key provided: <stripe-key>"


def test_phone_numbers_are_scrubbed_in_international_and_us_forms():
    out = scrub("call +44 20 7946 0958 or (415) 555-0199 or 415-555-0199 or +14155550199")
    assert out == "call <phone> or <phone> or <phone> or <phone>"


def test_national_phone_number_is_scrubbed_but_a_dump_of_zeros_is_not():
    assert scrub("ring 020 7946 0958 after six") == "ring <phone> after six"
    assert scrub("0000 0000 0000") == "0000 0000 0000"


def test_address_after_credentials_in_a_url_is_scrubbed():
    assert scrub("DATABASE_URL=mysql://admin:Sup3r-S3cret@10.1.4.20:3306/app") == \
        "DATABASE_URL=mysql://admin:<password>@<ip>:3306/app"


def test_prose_names_the_kind_of_secret_it_gives():
    assert scrub("the api key is 3f9a8b7c6d5e4f3a2b1c, rotate it") == "the api key is <secret>, rotate it"
    assert scrub("the token was Zq81Lm02Xv") == "the token was <token>"


def test_ipv6_short_form_is_scrubbed():
    assert scrub("ping6 fe80::1%en0 failed") == "ping6 <ip> failed"
    assert scrub("bind [2001:db8::42]:8080") == "bind [<ip>]:8080"


def test_password_in_prose_is_scrubbed():
    assert scrub("the password is hunter2x!") == "the password is <password>"


def test_a_long_key_is_cut_after_scrubbing_never_before():
    text = "python_http_client.exceptions.UnauthorizedError: HTTP Error 401 while calling " \
           "the mail API with sg = SendGridAPIClient('" + SENDGRID + "')"
    assert len(text) > 140
    quote = clip(text, 140)
    assert len(quote) <= 140
    assert "SG." not in quote and "8gTep5ZF" not in quote
    assert is_clean(quote)


# --- placeholders keep the sentence readable -------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("password=hunter22", "password=<password>"),
    ("DB_PASSWORD: s3cr3t-pw", "DB_PASSWORD: <password>"),
    ('{"api_key": "9f8e7d6c5b4a3928"}', '{"api_key": "<secret>"}'),
    ("mytool --token abc123def456", "mytool --token <token>"),
    ("mytool --password=\"x y z\"", "mytool --password=\"<password>\""),
    ("postgres://app:Tr0ub4dor@db.acme.com:5432/x", "postgres://app:<password>@db.acme.com:5432/x"),
    ("Authorization: Bearer 7Fq2LmX9vR4tZ1kW8pN3", "Authorization: Bearer <token>"),
    ("Authorization: Basic ZGVwbG95OnMzY3Jl", "Authorization: Basic <token>"),
    ("curl -u admin:S3cret99 https://x.io", "curl -u admin:<password> https://x.io"),
    ("Cookie: sessionid=8f7a6b5c4d3e2f1a", "Cookie: sessionid=<token>"),
    ("docker login -u ci -p S3cur3P@ss registry.example.com",
     "docker login -u ci -p <password> registry.example.com"),
    ("DB_PASSWORD=password123", "DB_PASSWORD=<password>"),
    ("machine api.heroku.com login me password abc123", "machine api.heroku.com login me password <password>"),
    ("File /home/alice/proj/x.py, line 3", "File ~/proj/x.py, line 3"),
    ("open /Users/bob/Library/x", "open ~/Library/x"),
    ("C:\\Users\\carol\\AppData\\npm", "~\\AppData\\npm"),
    ("see ~dave/notes", "see ~/notes"),
    ("alice@laptop:~/proj$ make", "<user@host>:~/proj$ make"),
    ("mail margaret@acme.com", "mail <email>"),
    ("connect 10.0.0.12:5432", "connect <ip>:5432"),
    ("ssh db01.internal", "ssh <host>"),
    ("key ghp_NqVwYS81VP7Hb1DX8pPd5khxE3pyIgKpaUnA", "key <github-token>"),
    ("AKIAMHP3W6W7Q3GXSC1F", "<aws-key>"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\nQyNT\n-----END OPENSSH PRIVATE KEY-----\nok",
     "<private-key>\nok"),
])
def test_placeholder_names_what_stood_there_and_keeps_the_key(text, expected):
    assert scrub(text) == expected


# --- look-alikes that make a lesson useful are kept -----------------------------------------

@pytest.mark.parametrize("text", [
    "127.0.0.1:8000", "[::1]:5173", "0.0.0.0:80", "8.8.8.8", "1.2.3.4", "numpy==1.26.4.1",
    "10:15:30", "2024-03-18", "dead::beef", "arr[::2]", "/tmp/x/y.log", "/usr/lib/python3.12",
    "author: Fowler", "unexpected token: IDENTIFIER", "UnauthorizedError: denied",
    "login(user, password=password)", "token = tokenizer.next()", "def f(password: str):",
    "password: ${DB_PASSWORD}", "Authorization: Bearer ${TOKEN}", "PWD=/tmp/build",
    "git@github.com: Permission denied", "threading.local()", "image@2x.png",
    "max_tokens=1024", "password_file=/run/secrets/db", "the token expired",
    "    token: TrioToken | None = None", "    hash_secret: bytes", "    pass_fds: Sequence[int]",
    'AWAIT_CLIENT_AUTH = "await-client-auth"', '{"hash_secret": "hash.secret"}',
    "see http://www.example.org/~david/notes", 'address = "192.0.2.10:7346"',
    '{"sessionId":"d6e0bada-1959-4eec-a9d2-0bfade768d8f"}', '"input_tokens": 1520',
    'SERVER_AUTH: "serverAuth",', 'client_secret="my-client-secret"', "from hypothesis.internal import x",
    "use the --username and --password options instead", 'auth = "Basic " + creds', 'password = ":****"',
])
def test_look_alikes_are_kept(text):
    assert scrub(text) == text, findings(text)


# --- the API ---------------------------------------------------------------------------------

def test_findings_give_kind_and_span_in_order():
    text = "ssh 10.0.0.12 with password=hunter22"
    found = findings(text)
    assert [f.kind for f in found] == [Kind.IP, Kind.PASSWORD]
    assert [text[f.start:f.end] for f in found] == ["10.0.0.12", "hunter22"]
    assert found[0] == Finding(4, 13, Kind.IP) and found[0].placeholder == "<ip>"


def test_specific_format_wins_over_the_generic_key_value():
    assert scrub("GITHUB_TOKEN=ghp_NqVwYS81VP7Hb1DX8pPd5khxE3pyIgKpaUnA") == "GITHUB_TOKEN=<github-token>"


def test_scrub_is_idempotent_and_its_output_clean():
    text = "token=abc123def456 at /home/eve/x from 10.1.2.3 (eve@acme.com)"
    once = scrub(text)
    assert scrub(once) == once
    assert is_clean(once) and not is_clean(text)
    assert looks_private(text) and not looks_private(once)


def test_safety_module_still_offers_the_same_scrubber():
    assert safety.scrub is scrub and safety.looks_private is looks_private


def test_require_clean_refuses_and_names_the_kinds_but_not_the_value():
    with pytest.raises(ScrubbedTextRequired) as err:
        require_clean("deploy with password=hunter22", "signing lesson record 3f2a")
    message = str(err.value)
    assert "signing lesson record 3f2a" in message and "password" in message
    assert "hunter22" not in message
    assert err.value.found == (Finding(21, 29, Kind.PASSWORD),)


def test_require_clean_returns_clean_text():
    text = scrub("deploy with password=hunter22")
    assert require_clean(text, "signing") == text


def test_clip_never_cuts_inside_a_placeholder():
    text = "x" * 30 + " password=hunter22 and more words after it"
    for n in range(5, len(text) + 5):
        out = clip(text, n)
        assert len(out) <= n
        assert "hunter" not in out
        assert "<passw" not in out or "<password>" in out


def test_clip_leaves_short_text_whole_but_scrubbed():
    assert clip("token=abc123def456", 100) == "token=<token>"


def test_clip_refuses_a_length_with_no_room():
    with pytest.raises(ValueError, match="n=0"):
        clip("x", 0)


# A rejected match is retried one character on; with an unbounded repeat a long run of
# look-alikes ("sk-sk-sk-…", 60 kB) once took minutes. The bound is on the test, not a benchmark:
# the failure it guards against is quadratic, hundreds of times over the limit.
@pytest.mark.timeout(30)
@pytest.mark.parametrize("text", ["sk-" * 20_000, "a://b:password@" * 4_000, "a@b.png" * 8_000,
                                  "Authorization: " * 4_000, "git@" * 15_000, ":" * 60_000])
def test_runs_of_look_alikes_do_not_make_the_scan_quadratic(text):
    once = scrub(text)
    assert is_clean(once)


def test_findings_of_a_short_text_are_kept_and_a_long_text_is_scanned_each_time():
    from commons.core.policy import scrubber

    short = "curl -H 'Authorization: Bearer ghp_" + "a" * 36 + "' https://api.github.com/user"
    from commons.core.policy import memo

    long = short + " " + "x" * memo.CHARS
    before = scrubber.findings.cache_info()
    first, again = scrubber.findings(short), scrubber.findings(short)
    assert first == again == scrubber.findings.__wrapped__(short) and first  # the token is found, cached or not
    assert scrubber.findings.cache_info().hits >= before.hits + 1
    size = scrubber.findings.cache_info().currsize
    assert scrubber.findings(long) == scrubber.findings.__wrapped__(long) and scrubber.findings(long)
    assert scrubber.findings.cache_info().currsize == size


def _woken_one_by_one(text: str) -> set[int]:
    """The rules a keyword or an anchor of theirs wakes, each looked for alone (str.find, search)."""
    from commons.core.policy.rules import RULES

    lower = text.lower()
    if len(lower) != len(text):
        return set(range(len(RULES)))
    return {rank for rank, rule in enumerate(RULES)
            if not (rule.keywords or rule.anchors) or any(k in lower for k in rule.keywords)
            or any(a.search(text) for a in rule.anchors)}


_WAKING_TEXTS = [
    "Contact: Jane Doe", "see /home/alice/src", "ghp_" + "a" * 36, "key is hunter2", "12 Baker Street",
    "Hauptstraße 5", "call 555-123-4567", "10.0.0.12", "db.internal.example", "fe80::1", "Hi Bob",
    "`tool7` fails on the author's machine with exit code 3 (case 7).", "running tool7", "İstanbul password",
    "machine api.example.com login me password secret", "export AWS_SECRET_ACCESS_KEY=abc", "",
]


def test_the_rules_woken_in_one_pass_are_those_each_keyword_and_anchor_wakes_alone():
    # scrubber._live finds keywords in one pass (Aho-Corasick), and on an ASCII text the anchors'
    # gates in one more (elsewhere their literal starts, and the anchors without one by a single
    # alternation): the same rules as looking for each alone.
    from commons.core.policy import scrubber
    from commons.core.policy.rule import Marks
    from tests.privacy.corpus import cases

    for text in [c.text for c in cases()] + _WAKING_TEXTS:
        assert scrubber._live(Marks(text)) == _woken_one_by_one(text), text


@settings(max_examples=300, database=None, deadline=None)
@given(text=st.text(alphabet="aAbeikmnoprsStxyz0123456789 .:/-_@~+(", max_size=60))
def test_the_rules_woken_in_one_pass_match_one_by_one_on_any_text(text):
    from commons.core.policy import scrubber
    from commons.core.policy.rule import Marks

    assert scrubber._live(Marks(text)) == _woken_one_by_one(text)


def test_an_anchor_with_flags_keeps_them_inside_the_one_pass():
    import re

    from commons.core.policy.rule import scoped

    joined = re.compile("|".join([scoped(re.compile("xyz")), scoped(re.compile("hello", re.IGNORECASE))]))
    assert joined.search("say HeLLo") and not joined.search("XYZ")
