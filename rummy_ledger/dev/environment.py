"""A development checkout's start-up: the embedded services' addresses in the environment.

The settings read `DATABASE_URL`, `CELERY_BROKER_URL` and `DJANGO_SECRET_KEY` and start nothing.
With `RUMMY_EMBEDDED=1`, what starts a process calls `environ_prepare()` before the settings are
read: `manage.py`, the test settings `tests/settings.py` (which pytest-django reads before any
conftest) and `bench/startup.py`. A
variable already set wins; for one that is not:

- `DATABASE_URL`: the embedded PostgreSQL under the data dir (`.data/` or `RUMMY_DATA_DIR`),
  started or attached to (this process then keeps it up), database `EMBEDDED_DATABASE_NAME`;
- `CELERY_BROKER_URL`: the embedded Redis's socket under the data dir (who needs the broker
  starts it: `serve`, a test's worker, a benchmark);
- `RATE_LIMIT_REDIS_URL`, when the broker is not Redis: the embedded Redis's socket too (the
  settings take the broker's when it is Redis);
- `DJANGO_SECRET_KEY`: the checkout's own, generated once into `<data dir>/secret_key`.

Every process started from this one (gunicorn, Celery beat and workers under `serve`, a test's
worker) inherits them and attaches to nothing itself.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import MutableMapping
from pathlib import Path
from urllib.parse import quote

BASE_DIR = Path(__file__).resolve().parents[2]
TRUE = {"1", "true", "yes", "on"}


def embedded_enabled(environ: MutableMapping[str, str] = os.environ) -> bool:
    """`RUMMY_EMBEDDED` as the settings read it."""
    return environ.get("RUMMY_EMBEDDED", "").lower() in TRUE


def data_dir(environ: MutableMapping[str, str] = os.environ) -> Path:
    """The data dir, as the settings' DATA_DIR names it."""
    return Path(environ.get("RUMMY_DATA_DIR", BASE_DIR / ".data")).resolve()


def environ_prepare(environ: MutableMapping[str, str] = os.environ) -> None:
    """Fill in what the settings need from the embedded services (a no-op without
    `RUMMY_EMBEDDED=1`)."""
    if not embedded_enabled(environ):
        return
    from rummy_ledger.dev import embedded

    directory = data_dir(environ)
    directory.mkdir(parents=True, exist_ok=True)
    if not environ.get("DJANGO_SECRET_KEY", "").strip():
        environ["DJANGO_SECRET_KEY"] = _secret_key(directory)
    if not environ.get("DATABASE_URL", "").strip():
        name = environ.get("EMBEDDED_DATABASE_NAME", embedded.DEFAULT_DATABASE_NAME)
        environ["DATABASE_URL"] = database_url(embedded.postgres_settings(directory, name))
    if not environ.get("CELERY_BROKER_URL", "").strip():
        environ["CELERY_BROKER_URL"] = embedded.redis_url(directory)
    broker = environ["CELERY_BROKER_URL"]
    if not environ.get("RATE_LIMIT_REDIS_URL", "").strip() and not broker.startswith("redis"):
        environ["RATE_LIMIT_REDIS_URL"] = embedded.redis_url(directory)
    # the demo's and the tests' webhook receivers listen on this machine (plain http, loopback)
    environ.setdefault("WEBHOOK_ALLOWED_HOSTS", "127.0.0.1")
    # whitenoise warns about a missing static root
    Path(environ.get("DJANGO_STATIC_ROOT", directory / "static")).mkdir(parents=True, exist_ok=True)


def database_url(params: dict) -> str:
    """Django's settings of a database as a URL (the host is a socket dir: percent-encoded)."""
    host = quote(params["HOST"] or "", safe="")
    return f"postgres://{params['USER']}@{host}:{params['PORT']}/{params['NAME']}"


def _secret_key(directory: Path) -> str:
    key_file = directory / "secret_key"
    if not key_file.exists():
        key_file.write_text(secrets.token_urlsafe(50))
        key_file.chmod(0o600)
    return key_file.read_text().strip()
