"""An error term printed whole (Elixir's supervisor tuples, a JSON error object) says why in the message it
carries deep inside: the failure line and the lesson's quote keep that message when they cut the term."""

from __future__ import annotations

from commons.core.learning import ErrorEpisode
from commons.core.learning.failure import FAILURE_CHARS, embedded_message, failure_line, shortened
from commons.core.learning.lessons import deterministic_text
from commons.core.policy import cut
from commons.core.records import LessonKind

# How Mix reports a supervisor that could not start a child: the reason is a nested term, the cause the
# `message:` of the exception inside it, past the first 200 characters.
SUPERVISOR_TERM = (
    "** (RuntimeError) failed to start Mix.PubSub, reason: {{:shutdown, {:failed_to_start_child, "
    "Mix.PubSub.Subscriber, {%Mix.Error{message: \"failed to open a TCP socket in Mix.Sync.PubSub.subscribe/1, "
    "reason: :eperm\", mix: 1}, [{Mix, :raise, 2, [file: ~c\"lib/mix.ex\", line: 647]}, {Mix.PubSub.Subscriber, "
    ":init, 1, [file: ~c\"lib/mix/pubsub/subscriber.ex\", line: 24]}, {:gen_server, :init_it, 2, [file: "
    "~c\"gen_server.erl\", line: 2276]}, {:gen_server, :init_it, 6, [file: ~c\"gen_server.erl\", line: 2236]}, "
    "{:proc_lib, :init_p_do_apply, 3, [file: ~c\"proc_lib.erl\", line: 333]}]}}}, {:child, :undefined, Mix.PubSub, "
    "{Supervisor, :start_link, [[Mix.PubSub.Subscriber], [strategy: :one_for_one, name: Mix.PubSub]]}, :permanent, "
    "false, :infinity, :supervisor, [Supervisor]}}"
)
CAUSE = "failed to open a TCP socket in Mix.Sync.PubSub.subscribe/1, reason: :eperm"


def test_a_long_error_term_keeps_the_message_it_carries_inside():
    line, code = failure_line("Exit code 1\n" + SUPERVISOR_TERM + "\n    (mix 1.19.5) lib/mix/pubsub.ex:36: Mix.PubSub.start/0")
    assert code == 1 and len(line) <= FAILURE_CHARS
    assert line.startswith("** (RuntimeError) failed to start Mix.PubSub") and CAUSE in line
    assert line.endswith(":supervisor, [Supervisor]}}")  # the term's end is kept, as every long line's is


def test_a_message_deeper_than_the_cut_replaces_the_middle_of_the_term():
    deep = SUPERVISOR_TERM.replace("Mix.PubSub.Subscriber, {%Mix.Error", "Mix.PubSub.Subscriber, " + "{:x, 1}, " * 30 + "{%Mix.Error")
    line = failure_line("Exit code 1\n" + deep)[0]
    assert len(line) <= FAILURE_CHARS and CAUSE in line and line.startswith("** (RuntimeError) failed to start")


def test_a_long_line_with_no_message_inside_keeps_its_head_and_its_tail():
    chain = "Cannot start service web: " + "failed to create task for container: " * 8 + "apparmor failed to apply profile"
    line = failure_line("Exit code 1\n" + chain)[0]
    assert line.startswith("Cannot start service web:") and line.endswith("apparmor failed to apply profile")


def test_shortened_cuts_as_a_plain_cut_where_no_message_is_lost():
    assert shortened("a short line", 40) == "a short line"
    plain = "error: " + "word " * 60
    assert shortened(plain, 80) == cut(plain, 80)
    assert CAUSE in shortened(SUPERVISOR_TERM, 120) and len(shortened(SUPERVISOR_TERM, 120)) <= 120


def test_a_json_error_objects_message_is_found_with_either_quote():
    assert embedded_message('{"error": {"code": 7, "message": "the model is overloaded, retry later"}}').group("text") \
        == "the model is overloaded, retry later"
    assert embedded_message("ValidationError(message='field x must be positive', code=3)").group("text") \
        == "field x must be positive"
    assert embedded_message("no message here: just words") is None


def test_the_lessons_quote_of_an_error_term_names_its_cause():
    def failed(uid: str, session: str) -> ErrorEpisode:
        return ErrorEpisode(session=session, uid=uid, at=1.0, tool="Bash", target="mix precommit",
                            failure=failure_line("Exit code 1\n" + SUPERVISOR_TERM)[0], exit_code=1)

    text = deterministic_text(LessonKind.ERROR, [failed("a", "s1"), failed("b", "s2")])
    assert text.startswith("`mix precommit` failed with \"** (RuntimeError)")
    assert "failed to open a TCP socket in Mix.Sync.PubSub.subscribe/1, reason: :eperm" in text
