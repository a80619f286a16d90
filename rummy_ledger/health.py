"""`/healthz` and `/readyz`, for a load balancer or an orchestrator polling every second.

- `/healthz`: the process answers (no database, no broker): restart it if this fails.
- `/readyz`: "send me traffic". Ready (200) when the database answers and every migration is
  applied: that is what storing and acknowledging a request needs. The broker is asked too, but a
  broker that does not answer leaves the node ready and `"degraded"` (200): deals are still stored
  and acknowledged, and beat's wake gets them settled once it is back, so taking every node
  out of rotation for a broker outage would refuse work the service does. The database not
  answering (or migrations missing) is 503, naming what does not. Why it does not answer (the
  error's first line, which may name hosts and users) is said only to a request carrying the
  operator's token (`METRICS_TOKEN`, as for /metrics). Each call costs a `SELECT 1`
  and a broker connection; the migrations are looked at until they are found applied (a deploy
  does not unapply them), then no more. The metric `rummy_broker_up` reports the broker too.
"""

from __future__ import annotations

import time

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor
from django.http import JsonResponse

from rummy_ledger.api.deadline import request_deadline
from rummy_ledger.metrics.broker import broker_probe
from rummy_ledger.metrics.http import operator_token_offered

NOT_ANSWERING = "not answering"
MIGRATIONS_RECHECK_SECONDS = 5.0  # how long "not applied" is believed before looking again
_migrations = {"applied": False, "checked_at": float("-inf"), "missing": 0}


def healthz(request) -> JsonResponse:
    return JsonResponse({"status": "ok"})


def readyz(request) -> JsonResponse:
    checks = {"database": _database(), "migrations": "", "broker": _broker()}
    if not operator_token_offered(request):
        checks = {name: _without_why(check) for name, check in checks.items()}
    checks["migrations"] = _migrations_check() if checks["database"] == "ok" else "not checked"
    ready = checks["database"] == "ok" and checks["migrations"] == "ok"
    status = "not ready" if not ready else "ready" if checks["broker"] == "ok" else "degraded"
    response = JsonResponse({"status": status, "checks": checks}, status=200 if ready else 503)
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
    return "ok" if error is None else f"{NOT_ANSWERING}: {error}"


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
    error = broker_probe()
    return "ok" if error is None else f"{NOT_ANSWERING}: {_first_line(error)}"


def _without_why(check: str) -> str:
    """ "not answering: <the error>" as anyone may read it: "not answering"."""
    return check.split(":", 1)[0] if check.startswith(NOT_ANSWERING) else check


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
