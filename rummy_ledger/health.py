"""`/healthz` and `/readyz`, for a load balancer or an orchestrator polling every second.

- `/healthz`: the process answers (no database, no broker): restart it if this fails.
- `/readyz`: the database answers, every migration is applied, the broker answers; 503 naming
  what does not, so a balancer sends no traffic to this node meanwhile. Each call costs a
  `SELECT 1` and a broker connection; the migrations are looked at until they are found applied
  (a deploy does not unapply them), then no more.
"""

from __future__ import annotations

import time

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor
from django.http import JsonResponse

from rummy_ledger.api.deadline import request_deadline
from rummy_ledger.celery import app

MIGRATIONS_RECHECK_SECONDS = 5.0  # how long "not applied" is believed before looking again
_migrations = {"applied": False, "checked_at": float("-inf"), "missing": 0}


def healthz(request) -> JsonResponse:
    return JsonResponse({"status": "ok"})


def readyz(request) -> JsonResponse:
    checks = {"database": _database(), "migrations": "", "broker": _broker()}
    checks["migrations"] = _migrations_check() if checks["database"] == "ok" else "not checked"
    ready = all(result == "ok" for result in checks.values())
    response = JsonResponse(
        {"status": "ready" if ready else "not ready", "checks": checks},
        status=200 if ready else 503,
    )
    if not ready:
        response["Retry-After"] = str(settings.REQUEST_UNAVAILABLE_RETRY_AFTER)
    return response


def _database() -> str:
    """`SELECT 1`, and once more on a new connection if the kept one is broken (the database
    restarted since it was opened): only a database that fails a new connection is not ready."""
    kept = connection.connection is not None
    with request_deadline(settings.READYZ_DEADLINE_SECONDS) as watch:
        error = _select_one()
        if error is not None and kept and not watch.abandoned:
            error = _select_one()
    if watch.abandoned:
        return f"not answering within {settings.READYZ_DEADLINE_SECONDS:g} s"
    return "ok" if error is None else f"not answering: {error}"


def _select_one() -> str | None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return None
    except DatabaseError as exc:
        connection.close()  # never reused: the next try opens a new one
        return _first_line(exc)


def _migrations_check() -> str:
    now = time.monotonic()
    if not _migrations["applied"] and now - _migrations["checked_at"] >= MIGRATIONS_RECHECK_SECONDS:
        executor = MigrationExecutor(connection)
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
        _migrations.update(applied=not plan, checked_at=now, missing=len(plan))
    return "ok" if _migrations["applied"] else f"{_migrations['missing']} not applied"


def _broker() -> str:
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=0)  # one try: a probe, not a wait
            conn.default_channel  # noqa: B018  (Redis: a PING; AMQP: a channel opened)
        return "ok"
    except Exception as exc:  # whatever the transport raises, the broker does not answer
        return f"not answering: {_first_line(exc)}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
