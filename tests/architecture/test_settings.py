"""Settings fail closed: a production process with a missing setting refuses to start, and the
production values pass `manage.py check --deploy`."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PRODUCTION = {
    "DATABASE_URL": "postgres://ledger@db.internal:5432/ledger",
    "CELERY_BROKER_URL": "amqp://ledger@mq.internal:5672//",
    "RATE_LIMIT_REDIS_URL": "redis://cache.internal:6379/0",
    "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
    "DJANGO_ALLOWED_HOSTS": "ledger.example.com",
}


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("RUMMY_", "DJANGO_"))}
    clean.pop("DATABASE_URL", None)
    clean.pop("CELERY_BROKER_URL", None)
    clean.pop("RATE_LIMIT_REDIS_URL", None)
    clean["DJANGO_SETTINGS_MODULE"] = "rummy_ledger.settings"
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_deploy_check_is_clean_under_production_settings():
    result = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_checks_fail_without_https():
    # the check is real: turning HTTPS off in production is reported
    result = manage("check", "--deploy", "--fail-level", "WARNING", DJANGO_HTTPS="0", **PRODUCTION)
    assert result.returncode != 0
    assert "security.W008" in result.stderr + result.stdout


def test_each_required_setting_missing_refuses_to_start():
    for name in ("DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SECRET_KEY", "RATE_LIMIT_REDIS_URL"):
        env = {k: v for k, v in PRODUCTION.items() if k != name}
        result = manage("check", **env)
        assert result.returncode != 0, name
        assert f"{name} is not set" in result.stderr, (name, result.stderr[-500:])


def test_embedded_services_are_opt_in():
    # without RUMMY_EMBEDDED nothing falls back to an embedded database: the process stops
    result = manage("check")
    assert result.returncode != 0
    assert "is not set" in result.stderr and "RUMMY_EMBEDDED=1" in result.stderr
