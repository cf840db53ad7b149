# Domeng Online game server: `docker build -t domeng-online .`, then
#     docker run -p 8000:8000 -v domeng-data:/data -e DOMENG_ADMIN_TOKEN=… domeng-online
# Without DOMENG_DATABASE_URL it keeps a SQLite database in the /data volume; docker-compose.yml
# runs it with PostgreSQL. The server migrates its database by itself at start (Alembic
# `upgrade head`). Every setting is a DOMENG_* variable (app/web/settings.py).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DOMENG_DATA_DIR=/data \
    DOMENG_PORT=8000

WORKDIR /app
COPY pyproject.toml README.md alembic.ini ./
COPY engine ./engine
COPY app ./app
COPY migrations ./migrations
COPY static ./static
COPY docs ./docs
COPY scripts/compile_engine.py ./scripts/

# An editable install from pyproject.toml: the server looks for its Alembic migrations beside the
# `app` package (app/store/database.py, MIGRATIONS_DIR = /app/migrations), which a plain `pip install .`
# would move to site-packages without them. The code stays root-owned and read-only to the server.
# PyICU (names' look-alike check, UTS #39) compiles against Debian's ICU: its headers and
# pkg-config stay (they bring the ICU libraries it links to), the compiler goes. The engine's hot
# modules are compiled with mypyc meanwhile (the `compiled` extra; docs/engine.md, "Compiled build"):
# about twice the rules' and the bots' speed; the image runs pure Python if that build fails.
RUN apt-get update \
    && apt-get install -y --no-install-recommends libicu-dev pkg-config g++ \
    && pip install -e ".[compiled]" \
    && (python scripts/compile_engine.py || true) \
    && rm -rf build \
    && apt-get purge -y --auto-remove g++ \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin domeng \
    && mkdir -p /data \
    && chown domeng:domeng /data

USER domeng
VOLUME ["/data"]
EXPOSE 8000

HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, sys, urllib.request; port = os.environ.get('DOMENG_PORT', '8000'); sys.exit(0 if urllib.request.urlopen(f'http://127.0.0.1:{port}/healthz', timeout=4).status == 200 else 1)"]

CMD ["domeng", "serve", "--host", "0.0.0.0"]
