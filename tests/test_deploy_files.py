"""The container files: docker-compose.yml as `docker-compose config` resolves it, and the Dockerfile.

The compose tests need Debian's ``docker-compose`` (1.29, ``apt-get install -y
--no-install-recommends docker-compose``), which validates and resolves a file without a Docker
engine; they are skipped when it is not installed. Its normalised YAML is read back with the YAML
library of the interpreter docker-compose itself runs on (the package depends on python3-yaml), so
the project needs no YAML dependency.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from app.web.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
COMPOSE = shutil.which("docker-compose")
ADMIN_TOKEN = "compose-Hv3#Tq8!Wm5-Zk2"
DB_PASSWORD = "testpassword0123"

needs_compose = pytest.mark.skipif(
    COMPOSE is None,
    reason="docker-compose is not installed (apt-get install -y --no-install-recommends docker-compose)",
)


def _compose(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run ``docker-compose -f docker-compose.yml ARGS`` with only ``env`` of our variables set."""
    assert COMPOSE is not None
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DOMENG_", "POSTGRES_", "COMPOSE_"))}
    return subprocess.run(
        [COMPOSE, "--project-directory", str(ROOT), "-f", str(ROOT / "docker-compose.yml"), *args],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _yaml_to_json(text: str) -> Any:
    """Parse YAML with the interpreter of the docker-compose script (which has PyYAML)."""
    assert COMPOSE is not None
    first_line = Path(COMPOSE).read_bytes().split(b"\n", 1)[0].decode(errors="replace")
    if not first_line.startswith("#!") or "python" not in first_line:
        pytest.skip(f"{COMPOSE} is not the Python docker-compose 1.x (no interpreter with PyYAML)")
    interpreter = shlex.split(first_line[2:])
    code = "import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)"
    parsed = subprocess.run(
        [*interpreter, "-c", code], input=text, capture_output=True, text=True, timeout=60, check=True
    )
    return json.loads(parsed.stdout)


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    """docker-compose.yml as `docker-compose config` resolves it, with both secrets set."""
    if COMPOSE is None:
        pytest.skip("docker-compose is not installed")
    result = _compose("config", DOMENG_ADMIN_TOKEN=ADMIN_TOKEN, POSTGRES_PASSWORD=DB_PASSWORD)
    assert result.returncode == 0, result.stderr
    config: dict[str, Any] = _yaml_to_json(result.stdout)
    return config


@needs_compose
def test_compose_runs_nginx_the_app_replicas_a_migration_postgres_and_redis(compose: dict[str, Any]) -> None:
    assert set(compose["services"]) == {"db", "redis", "migrate", "app", "nginx"}
    assert set(compose["volumes"]) >= {"db-data", "redis-data"}


@needs_compose
def test_database_is_postgres_16_with_a_healthcheck_and_a_named_volume(compose: dict[str, Any]) -> None:
    db = compose["services"]["db"]
    assert db["image"] == "postgres:16"
    assert "pg_isready" in " ".join(db["healthcheck"]["test"])
    assert any(v.startswith("db-data:/var/lib/postgresql/data") for v in db["volumes"])
    assert db["environment"]["POSTGRES_PASSWORD"] == DB_PASSWORD
    assert db["environment"]["POSTGRES_USER"] == "domeng"
    assert db["environment"]["POSTGRES_DB"] == "domeng"


@needs_compose
def test_redis_keeps_its_data_in_a_volume_with_a_healthcheck(compose: dict[str, Any]) -> None:
    redis = compose["services"]["redis"]
    assert redis["image"].startswith("redis:")
    assert "ping" in redis["healthcheck"]["test"]
    assert any(v.startswith("redis-data:/data") for v in redis["volumes"])
    assert "--appendonly" in redis["command"]  # the fencing counters survive a restart


@needs_compose
def test_migrations_run_once_before_the_replicas_start(compose: dict[str, Any]) -> None:
    migrate, app = compose["services"]["migrate"], compose["services"]["app"]
    assert migrate["command"] == ["domeng", "migrate"]
    assert migrate["depends_on"]["db"]["condition"] == "service_healthy"
    assert migrate["restart"] == "no"
    assert migrate["image"] == app["image"]
    assert migrate["environment"]["DOMENG_DATABASE_URL"] == app["environment"]["DOMENG_DATABASE_URL"]
    assert app["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert app["environment"]["DOMENG_MIGRATE"] == "false"


@needs_compose
def test_app_replicas_are_built_from_the_dockerfile_and_reached_only_through_nginx(
    compose: dict[str, Any],
) -> None:
    app = compose["services"]["app"]
    assert Path(app["build"]["context"]).resolve() == ROOT
    assert app["build"].get("dockerfile", "Dockerfile") == "Dockerfile"
    assert app["deploy"]["replicas"] >= 2
    assert "ports" not in app  # only nginx publishes a port
    assert app["depends_on"]["db"]["condition"] == "service_healthy"
    assert app["depends_on"]["redis"]["condition"] == "service_healthy"


@needs_compose
def test_app_environment_points_at_the_database_and_redis_and_passes_the_admin_token(
    compose: dict[str, Any],
) -> None:
    env = compose["services"]["app"]["environment"]
    assert env["DOMENG_DATABASE_URL"] == f"postgresql+asyncpg://domeng:{DB_PASSWORD}@db:5432/domeng"
    assert env["DOMENG_REDIS_URL"] == "redis://redis:6379/0"
    assert env["DOMENG_ADMIN_TOKEN"] == ADMIN_TOKEN
    assert env["DOMENG_FORWARDED_ALLOW_IPS"]  # nginx's X-Forwarded-For is trusted
    # the replicas listen on every address: without a list they would answer any Host (DNS rebinding)
    assert env["DOMENG_ALLOWED_HOSTS"] == "localhost"


@needs_compose
def test_the_allowed_hosts_of_the_replicas_come_from_the_environment() -> None:
    named = {"DOMENG_ALLOWED_HOSTS": "play.example,192.0.2.7"}
    result = _compose("config", DOMENG_ADMIN_TOKEN=ADMIN_TOKEN, POSTGRES_PASSWORD=DB_PASSWORD, **named)
    assert result.returncode == 0, result.stderr
    env = _yaml_to_json(result.stdout)["services"]["app"]["environment"]
    assert env["DOMENG_ALLOWED_HOSTS"] == "play.example,192.0.2.7"


@needs_compose
def test_nginx_publishes_port_8000_with_the_projects_config_after_a_healthy_app(
    compose: dict[str, Any],
) -> None:
    nginx = compose["services"]["nginx"]
    assert nginx["image"].startswith("nginx:")
    assert [(p["published"], p["target"]) for p in nginx["ports"]] == [(8000, 80)]
    mounted = [v.split(":") for v in nginx["volumes"]]
    assert [(Path(v[0]).resolve(), v[1]) for v in mounted] == [
        (ROOT / "deploy" / "nginx.conf", "/etc/nginx/nginx.conf")
    ]
    assert nginx["depends_on"]["app"]["condition"] == "service_healthy"
    assert "/healthz" in " ".join(nginx["healthcheck"]["test"])


def test_nginx_config_upgrades_websockets_and_replaces_the_forwarded_address() -> None:
    config = (ROOT / "deploy" / "nginx.conf").read_text()
    assert "upstream domeng" in config and "server app:8000" in config
    assert "proxy_set_header Upgrade $http_upgrade;" in config
    assert "proxy_set_header Connection $connection_upgrade;" in config
    # replaced, never appended: a client cannot name another address to dodge per-address limits
    assert "proxy_set_header X-Forwarded-For $remote_addr;" in config
    assert "$proxy_add_x_forwarded_for" not in config
    assert "client_max_body_size 64k;" in config  # app.web.middleware.MAX_BODY_BYTES
    assert "proxy_next_upstream error timeout http_503" in config
    # every process may be tried: a room's owner may be the last in its code's hash order
    # (tests/test_topology_scale.py)
    assert "proxy_next_upstream_tries 0;" in config


def _seconds(block: str, directive: str) -> int:
    """The first ``directive Ns;`` of ``block``, in seconds."""
    return int(block.split(f"\n{' ' * 8}{directive} ", 1)[1].split("s;", 1)[0].strip())


def test_nginx_passes_a_request_a_hung_process_does_not_answer_on_to_the_next() -> None:
    """A process stopped (SIGSTOP) or stuck still accepts connections: nginx gives up on it after
    its read timeout, and passes the request on only if that came within
    proxy_next_upstream_timeout. A socket's handshake times out after its read timeout, and that
    is above the server's ping interval (an open socket is never silent that long) and the lease
    (the next process can take the room when the handshake reaches it); a review's wait is past
    the window, so no review is computed twice. An API call waits longer than the server's own
    database timeout (the server answers its error first: a POST is not passed on and applied
    twice for a slow database), and a file (a page, /static/) less than a socket's handshake: a
    page reload gets past a hung process sooner than its socket does."""
    default = {name: field.default for name, field in Settings.model_fields.items()}
    config = (ROOT / "deploy" / "nginx.conf").read_text()
    server = config[config.index("    server {") : config.index("location /ws/")]
    sockets = config[config.index("location /ws/") : config.index("location ~ ^/api/")]
    review = config[config.index("location ~ ^/api/") : config.index("location = /metrics")]
    connect = _seconds(server, "proxy_connect_timeout")
    read, window = _seconds(server, "proxy_read_timeout"), _seconds(server, "proxy_next_upstream_timeout")
    assert read + connect < window
    socket_read = _seconds(sockets.replace("\n    ", "\n"), "proxy_read_timeout")
    socket_window = _seconds(sockets.replace("\n    ", "\n"), "proxy_next_upstream_timeout")
    assert default["ping_interval_s"] < socket_read and default["lease_s"] < socket_read
    assert socket_read + connect < socket_window
    assert (
        window < default["review_timeout_s"] < _seconds(review.replace("\n    ", "\n"), "proxy_read_timeout")
    )
    api = config[config.index("location /api/ {") : config.index("location /api/admin/ {")]
    admin = config[config.index("location /api/admin/ {") : config.index("location = /api/admin/export")]
    export = config[config.index("location = /api/admin/export") : config.index("location / {")]
    files = config[config.index("location / {") :]
    api_read, admin_read, export_read, file_read = (
        _seconds(block.replace("\n    ", "\n"), "proxy_read_timeout") for block in (api, admin, export, files)
    )
    assert (
        default["database_timeout_s"] < api_read <= admin_read < export_read and api_read + connect < window
    )
    assert file_read < socket_read and file_read + connect < window
    # a slow bulk export is never built again by the next process: no pass-on after a timeout
    assert re.search(r"^\s*proxy_next_upstream error http_503;$", export, re.M), export


@needs_compose
@pytest.mark.parametrize("missing", ["DOMENG_ADMIN_TOKEN", "POSTGRES_PASSWORD"])
def test_compose_refuses_to_run_without_its_secrets(missing: str) -> None:
    env = {"DOMENG_ADMIN_TOKEN": ADMIN_TOKEN, "POSTGRES_PASSWORD": DB_PASSWORD}
    del env[missing]
    result = _compose("config", "--quiet", **env)
    assert result.returncode != 0
    assert f"set {missing}" in result.stderr


# -- Dockerfile (plain text) -------------------------------------------------------------------


def _instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions as (KEYWORD, arguments), continuation lines joined."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    pairs = [line.split(maxsplit=1) for line in lines if line and not line.startswith("#")]
    return [(pair[0].upper(), pair[1] if len(pair) > 1 else "") for pair in pairs]


def _last(keyword: str) -> str:
    found = [args for key, args in _instructions() if key == keyword]
    assert found, f"the Dockerfile has no {keyword}"
    return found[-1]


def test_dockerfile_builds_on_python_311_slim() -> None:
    assert _instructions()[0] == ("FROM", "python:3.11-slim")


def test_dockerfile_installs_the_project_with_pip() -> None:
    runs = " ".join(args for key, args in _instructions() if key == "RUN")
    # editable: app/store/database.py finds migrations/ beside `app`; with mypyc (the `compiled` extra)
    assert 'pip install -e ".[compiled]"' in runs
    copies = [args for key, args in _instructions() if key == "COPY"]
    assert any("pyproject.toml" in args for args in copies)
    assert any(args.startswith("migrations") for args in copies)


def test_dockerfile_runs_as_a_non_root_user() -> None:
    user = _last("USER").split(":")[0]
    assert user not in ("root", "0", "")


def test_dockerfile_serves_on_port_8000_from_all_interfaces() -> None:
    assert json.loads(_last("CMD")) == ["domeng", "serve", "--host", "0.0.0.0"]
    assert "8000" in _last("EXPOSE").split()


def test_dockerfile_keeps_the_data_dir_in_a_volume() -> None:
    env = " ".join(args for key, args in _instructions() if key == "ENV")
    assert "DOMENG_DATA_DIR=/data" in env
    assert json.loads(_last("VOLUME")) == ["/data"]


def test_dockerfile_healthcheck_gets_healthz_with_python() -> None:
    healthcheck = _last("HEALTHCHECK")
    command = json.loads(healthcheck[healthcheck.index("CMD") + 3 :])
    assert command[:2] == ["python", "-c"]
    assert "/healthz" in command[2]
    compile(command[2], "HEALTHCHECK", "exec")  # it is valid Python


def test_the_compose_secrets_are_made_once_into_a_file_git_leaves_out() -> None:
    """A new operator's report: the README's ``DOMENG_ADMIN_TOKEN=$(openssl rand …)
    POSTGRES_PASSWORD=$(openssl rand …) docker compose up`` made secrets nobody could read again:
    /admin/login asked for a secret never shown, and the next ``docker compose`` command (the
    README's ``--scale``) had none, or new ones that the database made with the first would not
    take. The documents write them once into ``.env`` (which compose reads), and git leaves that
    file out as the image does."""
    assert "/.env" in (ROOT / ".gitignore").read_text().split()
    for name in ("README.md", "docs/deploy.md", "docker-compose.yml"):
        text = (ROOT / name).read_text()
        fresh = [line for line in text.splitlines() if "docker compose" in line and "$(openssl rand" in line]
        assert fresh == [], (name, fresh)
        assert '"$(openssl rand -hex 24)" > .env' in text, name


def test_dockerignore_keeps_local_state_out_of_the_image() -> None:
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".git", ".venv", "data", "*.egg-info", ".env"} <= set(ignored)


def test_dockerfile_ships_the_rulebook_and_builds_pyicu_against_debians_icu() -> None:
    runs = " ".join(args for keyword, args in _instructions() if keyword == "RUN")
    copies = [args for keyword, args in _instructions() if keyword == "COPY"]
    assert "docs ./docs" in copies  # the rules page serves docs/rules.md and docs/record.md
    assert "libicu-dev" in runs and "pkg-config" in runs and "g++" in runs


def test_dockerfile_compiles_the_engine_while_it_has_a_compiler() -> None:
    """The image runs the rules compiled by mypyc (docs/engine.md, "Compiled build"), built before
    the compiler is purged, and still builds (pure Python) if that fails."""
    runs = [args for keyword, args in _instructions() if keyword == "RUN"]
    build = next(args for args in runs if "compile_engine.py" in args)
    assert build.index("compile_engine.py") < build.index("apt-get purge -y --auto-remove g++")
    assert "(python scripts/compile_engine.py || true)" in build
    copies = [args for keyword, args in _instructions() if keyword == "COPY"]
    assert "scripts/compile_engine.py ./scripts/" in copies


def test_scripts_run_installs_the_server_and_scripts_test_the_test_tools() -> None:
    """The README's two commands: `scripts/run` needs only the server's packages, `scripts/test`
    brings the test tools (the ``dev`` extra)."""
    run = (ROOT / "scripts" / "run").read_text()
    test = (ROOT / "scripts" / "test").read_text()
    assert "bash scripts/bootstrap\n" in run and "--dev" not in run
    assert "bash scripts/bootstrap --dev" in test
    bootstrap = (ROOT / "scripts" / "bootstrap").read_text()
    assert 'pip install --quiet -e ".${wanted}"' in bootstrap and 'extras="[dev]"' in bootstrap
    assert 'wanted="${extras:-[compiled]}"' in bootstrap  # the server's install brings mypyc
    assert "scripts/compile_engine.py" in bootstrap
    project = (ROOT / "pyproject.toml").read_text()
    start, end = project.index("dependencies = ["), project.index("[project.optional-dependencies]")
    server_deps = project[start:end]
    assert "pytest" not in server_deps and "playwright" not in server_deps and "ruff" not in server_deps
