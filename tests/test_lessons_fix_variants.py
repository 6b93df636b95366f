"""Real-format sessions whose fix is the failing call itself in another form: the program under its
other spelling (Compose v1 for v2), the same package in another build (``psycopg2-binary``). The
lesson names that fix once for every service or package, and a build that failed inside pip is
its own pitfall, not pip's."""

from __future__ import annotations

from pathlib import Path

from commons.core.learning.lessons import Lesson
from commons.core.records import LessonKind, Scope
from commons.demo.sessions._build import PIP_EXTERNALLY_MANAGED, Session, pip_pg_config_missing
from commons.ingest.lessons_report import measure

NO_COMPOSE = "docker: 'compose' is not a docker command.\nSee 'docker --help'"


def _session(folder: Path, slug: str, day: int, project: str) -> Session:
    s = Session("x", day, slug, f"/home/dev/src/{project}", "main", 10)
    s.path = folder / f"{slug}.jsonl"
    return s


def compose_v1(folder: Path, day: int, project: str, service: str) -> Path:
    s = _session(folder, f"compose-{service}", day, project)
    s.user(f"bring up {service} for the integration tests")
    s.bash(f"docker compose up -d {service}", f"Start {service}", NO_COMPOSE, exit_code=1)
    s.bash("docker-compose --version", "Is the standalone Compose installed?", "docker-compose version 1.29.2")
    s.bash(f"docker-compose up -d {service}", f"Start {service} with docker-compose",
           f"Creating network {project}_default\nCreating {project}_{service}_1 ... done")
    s.write()
    return s.path


def binary_wheel(folder: Path, day: int, project: str, package: str) -> Path:
    s = _session(folder, f"binary-{package}", day, project)
    s.user(f"add the {package} driver and check it imports")
    s.bash(f"pip install {package}", f"Install {package}", pip_pg_config_missing(package), exit_code=1)
    s.bash("which pg_config", "Is pg_config there?", "", exit_code=1)
    s.bash(f"pip install {package}-binary", f"Install the binary wheel of {package}",
           f"Successfully installed {package}-binary-2.9.10")
    s.write()
    return s.path


def externally_managed(folder: Path, day: int, project: str, package: str) -> Path:
    s = _session(folder, f"uv-{package}", day, project)
    s.user(f"add {package} to the tooling")
    s.bash(f"pip install {package}", f"Install {package}", PIP_EXTERNALLY_MANAGED, exit_code=1)
    s.bash(f"uv add {package}", f"Add {package} with uv", f"Resolved 12 packages in 210ms\n + {package}==2.3.1")
    s.write()
    return s.path


def error_lessons(paths: list[Path]) -> list[Lesson]:
    return [l for l in measure(paths).lessons if l.kind is LessonKind.ERROR]


def test_compose_v1_after_v2_failed_is_the_fix_named_for_any_service(tmp_path):
    (lesson,) = error_lessons([compose_v1(tmp_path, 3, "shop", "postgres"), compose_v1(tmp_path, 5, "atlas", "redis")])
    assert lesson.text == ("`docker compose` failed with \"docker: 'compose' is not a docker command.\"; "
                           "`docker-compose up -d <arg>` succeeded after it (2 of 2 sessions).")
    assert lesson.scope is Scope.SHARED


def test_the_binary_wheel_after_a_source_build_failed_is_one_fix_that_names_the_packages_it_was_seen_for(tmp_path):
    (lesson,) = error_lessons([binary_wheel(tmp_path, 3, "shop", "psycopg2"), binary_wheel(tmp_path, 6, "atlas", "psycopg")])
    assert lesson.text == ("`pip install` failed with \"Error: pg_config executable not found.\"; "
                           "`pip install <package>-binary` succeeded after it, for psycopg2 and psycopg (2 of 2 sessions).")


def test_a_package_met_again_names_the_binary_wheel_lesson_the_same(tmp_path):
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
    first = binary_wheel(tmp_path / "a", 3, "shop", "psycopg2")
    once = error_lessons([first, binary_wheel(tmp_path / "b", 6, "atlas", "psycopg2")])
    more = error_lessons([first, binary_wheel(tmp_path / "c", 6, "atlas", "psycopg")])
    assert "for psycopg2 (2 of 2 sessions)" in once[0].text
    assert once[0].id == more[0].id  # which packages it was seen for is no part of its name


def test_another_tool_for_any_package_names_no_packages(tmp_path):
    (lesson,) = error_lessons([externally_managed(tmp_path, 4, "shop", "httpx"), externally_managed(tmp_path, 7, "atlas", "rich")])
    assert lesson.text.endswith("`uv add <package>` succeeded after it (2 of 2 sessions).")


def test_two_causes_of_a_failed_pip_install_are_two_lessons_each_with_its_own_fix(tmp_path):
    paths = [binary_wheel(tmp_path, 3, "shop", "psycopg2"), binary_wheel(tmp_path, 6, "atlas", "psycopg"),
             externally_managed(tmp_path, 4, "shop", "httpx"), externally_managed(tmp_path, 7, "atlas", "rich")]
    texts = sorted(l.text for l in error_lessons(paths))
    assert len(texts) == 2
    assert "pg_config" in texts[0] and "<package>-binary" in texts[0] and "uv add" not in texts[0]
    assert "externally-managed-environment" in texts[1] and "`uv add <package>`" in texts[1]
