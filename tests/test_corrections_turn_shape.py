"""Corrections read against the shape of the agent's turn: whether it left the person a question, whether
its last call changed anything, whether it claimed done; and the replies that push back on it in any
language (a quote of its words denied, a doubting question, a try that shows the result fails)."""

from __future__ import annotations

import pytest

from commons.ingest.corrections import AgentTurn, asks, changes_nothing, claims_done, corrects, quotes_back

# The agent read a workflow file, then put its questions in a list and closed on "once you tell me…".
ASKED_LIST_FR = AgentTurn(
    said="Avant de chercher des starters, peux-tu me préciser :\n- **Langage** : TypeScript, Python, Go, Rust ?\n"
         "- **Tests** : un framework souhaité ?\n\nDès que tu me donnes ça, je te propose des options.",
    acted="Bash sed -n '200,400p' steps/step-03-starter.md", asked=True)
# The agent offered a menu of choices keyed [A]/[C], after it read a file.
MENU_ES = AgentTurn(said="Resumen listo.\n\n[A] Elicitación avanzada\n[C] Continuar al siguiente paso",
                    acted="Read docs/prd.md", asked=True)
# The agent wrote a draft of the person's answers and asked whether they hold.
DRAFT_FR = AgentTurn(said="Problèmes : reporting lourd et incohérent, saisie manuelle multi-sources. "
                          "Est-ce que cela complète bien ta compréhension ?",
                     words="Voici le résumé. Problèmes : reporting lourd et incohérent, saisie manuelle multi-sources. "
                           "Est-ce que cela complète bien ta compréhension ?",
                     acted="Bash cat steps/step-02-discovery.md", asked=True)
# The agent built an export and said it was ready.
EXPORT_FR = AgentTurn(said="Export HTML cliquable prêt : _bmad-output/prototype.html", acted="Write prototype.html",
                      claimed_done=True)
EXPORT_DE = AgentTurn(said="Der Export ist erstellt: out/report.html", acted="Write out/report.html", claimed_done=True)
ROW_EN = AgentTurn(said="Updated the grid: every row now shows its local hours.", acted="Edit scripts/app.js",
                   claimed_done=True)
# The agent generated ideas and asked which to keep.
IDEAS_IT = AgentTurn(said="Ecco altre idee per il flusso. Quali ti convincono?", asked=True)
# The agent asked for secret names, after checking the CLI's login.
SECRETS_EN = AgentTurn(said="Send me the list of secret names to create, e.g. `TEST_USER_PASSWORD,SERVICE_KEY`.",
                       acted="Bash gh auth status", asked=True)


def test_the_agent_asked_when_a_question_closes_its_words_though_options_or_a_promise_follow():
    assert asks(ASKED_LIST_FR.said) and asks(MENU_ES.said)
    assert asks("Sollen wir weitermachen? Sag mir Bescheid.") and asks("Wähle eine Option:\n1) A\n2) B\n\nSag mir welche.")
    assert asks("Quel fichier PRD utiliser ?\n\nExemple réponse rapide : `prd.md`")


def test_a_question_the_agent_answers_itself_or_a_query_string_is_no_question_to_the_person():
    assert not asks("¿Por qué falló? El lock estaba viejo.\n\nLo borré y el push pasó.")
    assert not asks("Done. The endpoint is https://api.example.com/items?limit=1 and it answers 200.")


def test_a_call_that_only_reads_changes_nothing_and_one_that_writes_does():
    assert changes_nothing("") and changes_nothing("Read docs/prd.md") and changes_nothing("Bash gh auth status")
    assert changes_nothing("Bash cd app && git status --short && rg -n 'TODO' src | head -20")
    assert not changes_nothing("Edit src/app.ts") and not changes_nothing("Bash sed -i 's/a/b/' x.txt")
    assert not changes_nothing("Bash cat <<'EOF' > notes.md") and not changes_nothing("Bash npm install")


@pytest.mark.parametrize("text, turn", [
    # answers to a question the agent put after only reading, whatever "not" or "but" they hold
    ("langage je pense à rust mais je suis ouvert. Pareil pour les tests. Pas de contraintes d'environnement",
     ASKED_LIST_FR),
    ("non je n'ai pas de palette imposée", ASKED_LIST_FR),
    ("C", MENU_ES),
    ("la A, no la C", MENU_ES),
    ("Fusionner devis et plan de test. Pour le reste je n'ai pas trop d'idées", ASKED_LIST_FR),  # "pas trop": not much
    ("1 + 2 TEST_USER_EMAIL, TEST_USER_PASSWORD, OPENAI_API_KEY", SECRETS_EN),  # names typed, not shouted
    # a request that opens with "can you", in other languages than English
    ("Est-ce que tu peux suggérer des révisions sur les constats majeurs", EXPORT_FR),
    ("¿Puedes agregar también el modo oscuro?", EXPORT_FR),
    ("Kannst du noch einen Test für den Export schreiben?", EXPORT_DE),
    # a feature asked for after its topic, in a verb-final or topic-first language
    ("报表页面增加一个导出按钮，不要改现有的布局", ROW_EN),
    ("ここに言語として英語を追加してください。他の文言は変えないでください", ROW_EN),
    # a rule for the agent stated with "when I…", after a claim of done
    ("当我说出单号加已完成，帮我把状态改为完成", ROW_EN),
])
def test_an_answer_a_request_or_a_rule_after_the_agents_turn_is_not_a_correction(text, turn):
    assert not corrects(text, turn)


@pytest.mark.parametrize("text, turn", [
    # the agent's words quoted back, and denied in the quoting sentence
    ('je ne suis pas sûr de la formulation "reporting lourd et incohérent". Lourd oui, mais pas incohérent', DRAFT_FR),
    # after a claim of done: a try, and what the person then sees
    ("quand je clique sur un lien de prototype.html je vois un json", EXPORT_FR),
    ("when I open the report I get a blank page", EXPORT_DE),
    ("wenn ich den Bericht öffne, sehe ich nur eine leere Seite", EXPORT_DE),
    # a doubting question, or one that denies what the agent set itself to do
    ("est ce que tu attends vraiment des questions de ma part à cette étape ?", IDEAS_IT),
    ("Est-ce que ton objectif n'est pas de formuler mon besoin dans un livrable ?", IDEAS_IT),
    ("¿de verdad necesitas que te dé más ideas?", IDEAS_IT),
    # "X; otherwise it's fine": X changes what the agent proposed
    ("L'utilisation se fait tout au long de la journée. Sinon c'est très bien", EXPORT_FR),
    ("The hours should start at midnight. Otherwise it looks good", ROW_EN),
    # right after a claim of done, a question about what the result holds or lacks
    ("why is there a city name in the midnight slot?", ROW_EN),
    ("为什么0点的格子里有城市名", ROW_EN),
    ("I see the grid, but where are the hours for Adelaide?", ROW_EN),
])
def test_a_push_back_read_from_the_shape_of_the_reply_is_a_correction(text, turn):
    assert corrects(text, turn)


def test_a_claim_of_done_is_read_in_the_participles_of_making_of_several_languages():
    assert claims_done(EXPORT_FR.said) and claims_done(EXPORT_DE.said)
    assert claims_done("He creado el archivo y agregado la ruta.") and claims_done("Ho aggiunto il test, è pronto.")
    assert not claims_done("Crée une organisation, puis ajoute un utilisateur avec POST /users.")  # imperatives
    assert not claims_done("Create the file, then run the tests.")


def test_a_quote_counts_only_when_the_agent_said_those_words():
    assert quotes_back('la formulation "reporting lourd et incohérent" me gêne', DRAFT_FR)
    assert not quotes_back('la formulation "rapport mensuel consolidé" me gêne', DRAFT_FR)


# The agent said it had written the spec.
SPEC_KO = AgentTurn(said="스펙 문서를 작성했습니다: specs/001/spec.md", acted="Write specs/001/spec.md", claimed_done=True)
IDEAS_FR = AgentTurn(said="Voici les idées #71 à #81. Tu veux en valider certaines ?", asked=True)


@pytest.mark.parametrize("text, turn", [
    # approved, with one exception the person denies
    ("Je valide toutes ces idées. Il y a juste la 80 que je ne trouve pas claire", IDEAS_FR),
    ("all good, only the second chart does not load", ROW_EN),
    # what the person had said, restated, in languages that drop "I" and "you"
    ("그런데, 스펙을 작성할때 ui는 layout.png를 참고하라고 했었거든? 반영이 안되었니?", SPEC_KO),
    ("我说过不要改表头，表头还是被改了", ROW_EN),
])
def test_an_exception_to_an_approval_or_a_restated_instruction_is_a_correction(text, turn):
    assert corrects(text, turn)


@pytest.mark.parametrize("text, turn", [
    # a file name that holds a failure word is a name
    ("UI는 issue_ticket.png를 참고해서 버튼을 배치해 주세요", SPEC_KO),
    ("please keep error_log.txt and src/errors/ as they are named", ROW_EN),
    # a prompt template handed over with @paths: its capitals are emphasis, its "still failing" a step of it
    ("IT IS CRITICAL THAT YOU FOLLOW THIS COMMAND: LOAD the FULL @bmad/workflows/check/workflow.md, READ it all!",
     ROW_EN),
    ("Run the checklist.\n" + "Validate each item and record the result.\n" * 40
     + "4. If still failing after 3 iterations, document the remaining issues.\n"
     + "Record the outcome of each step in the report.\n" * 20, ROW_EN),
    # an approval whose "just" asks for more, with no denial
    ("je valide, ajoute juste une section sur les risques", IDEAS_FR),
])
def test_names_templates_and_plain_approvals_are_not_corrections(text, turn):
    assert not corrects(text, turn)


@pytest.mark.parametrize("text, turn", [
    ("o botão ainda não aparece na página", EXPORT_FR),
    ("le bouton n'apparaît pas sur la page", EXPORT_FR),
    ("no se ve el botón en la página", EXPORT_FR),
    ("il pulsante non compare nella pagina", EXPORT_FR),
    ("der Export lädt nicht, die Seite bleibt weiß", EXPORT_DE),
])
def test_what_the_agent_made_not_doing_its_job_after_a_claim_of_done_is_a_correction_in_romance_and_german(text, turn):
    assert corrects(text, turn)


@pytest.mark.parametrize("text", [
    "oui, vérifie bien si ce qu'on a fait ne crée pas de conflits",
    "ok, make sure the export doesn't overwrite the old report",
    "vale, asegúrate de que no se rompa el login",
    "ja, prüf noch, ob der Export nicht die alte Datei überschreibt",
])
def test_a_doesnt_inside_a_condition_to_check_is_a_goal_not_a_failure(text):
    assert not corrects(text, EXPORT_FR)


@pytest.mark.parametrize("text, turn", [
    # leave to go on without asking when the agent asked nothing: a working style the person grants, not a
    # fault of the agent's turn (after the agent asked, it is a push-back on the asking: test_corrections_structure)
    ("don't stop to ask me, just keep going until it is all done", EXPORT_FR),
    ("基于sdk 36进行调试，验证好后再结束，不要停下来问我", ROW_EN),
])
def test_leave_to_go_on_without_asking_is_not_a_correction(text, turn):
    assert not corrects(text, turn)


DONE_EN = AgentTurn(said="Done: the export now writes report.html and the tests pass.", acted="Edit export.py",
                    claimed_done=True)


@pytest.mark.parametrize("text", [
    "now add a csv export, and don't run the full test suite",
    "maintenant ajoute un export CSV, mais ne lance pas toute la suite de tests",
    "ahora agrega la exportación CSV, pero no toques los tests",
    "bitte noch einen CSV-Export, aber nicht die Tests anfassen",
    "接下来加一个CSV导出，不要动测试",
    "次はCSV出力を追加して。テストは触らないで",
])
def test_the_next_task_carrying_a_prohibition_is_not_a_correction(text):
    assert not corrects(text, DONE_EN)


@pytest.mark.parametrize("text", [
    "now it fails with a 500",
    "please revert that, the export broke the build",
    "bitte rückgängig machen",
])
def test_a_report_or_an_undo_after_a_next_step_word_is_still_a_correction(text):
    assert corrects(text, DONE_EN)


LISTO_ES = AgentTurn(said="Listo, el botón ya guarda el formulario.", acted="Edit form.tsx", claimed_done=True)


@pytest.mark.parametrize("text, turn", [
    ("ahora no carga nada", LISTO_ES),
    ("el botón no aparece en la página", LISTO_ES),
    ("maintenant ça plante au démarrage", EXPORT_FR),
    ("o app trava quando abro o relatório", EXPORT_FR),
    ("l'app si blocca all'avvio", EXPORT_FR),
])
def test_a_failure_after_a_claim_of_done_is_read_in_the_words_each_language_has_for_it(text, turn):
    assert corrects(text, turn)


def test_an_english_no_before_a_noun_is_not_read_as_spanish():
    assert not corrects("no one asked for a csv export, but thanks", AgentTurn(said="Which export do you want?", asked=True))


# -- across turns, as the episode builder reads them ------------------------------------------------

from commons.core.learning.episode import CorrectionEpisode  # noqa: E402
from commons.ingest.episodes import BuildState, EpisodeBuilder  # noqa: E402
from commons.ingest.turns import AgentSaid, PersonSaid, SessionSeen, ToolCalled  # noqa: E402

PROTECT_OUTPUT = ("$ npm run protect -- --yes\n\n> app@1.0.0 protect\n> bash scripts/protect.sh --yes\n\n"
                  + '{\n  "required_linear_history": {\n    "enabled": true\n  }\n}\n' * 12
                  + '[protect] Applying protection to master...\n{\n  "message": "Branch not found",\n  "status": "404"\n}\n'
                  "gh: Branch not found (HTTP 404)\n")


def _corrections(*turns):
    builder = EpisodeBuilder(BuildState())
    for turn in (SessionSeen(session="s1", project="/home/dev/app", at=1.0), PersonSaid("p0", 1.0, "set up the repo"),
                 *turns):
        builder.feed(turn)
    return [e.said for e in builder.episodes() if isinstance(e, CorrectionEpisode)]


def test_a_claim_of_done_still_stands_after_a_thanks_and_a_failure_pasted_then_contradicts_it():
    found = _corrections(ToolCalled("c1", "Edit", "scripts/protect.sh", at=2.0),
                         AgentSaid(3.0, "C'est fait : la protection des branches est configurée."),
                         PersonSaid("p1", 4.0, "Merci beaucoup"), AgentSaid(5.0, "Avec plaisir !"),
                         PersonSaid("p2", 6.0, PROTECT_OUTPUT))
    assert len(found) == 1 and "npm run protect" in found[0]


def test_after_a_thanks_a_new_call_or_a_new_request_ends_the_claim():
    found = _corrections(ToolCalled("c1", "Edit", "scripts/protect.sh", at=2.0),
                         AgentSaid(3.0, "Done: branch protection is configured."),
                         PersonSaid("p1", 4.0, "thanks, now add a CODEOWNERS file"), AgentSaid(5.0, "Sure, what owners?"),
                         PersonSaid("p2", 6.0, "just me, @dev"))
    assert found == []
