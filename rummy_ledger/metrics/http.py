"""The metrics' HTTP side: request latency per route, and the `/metrics` endpoint.

`/metrics` is not public: it answers only a request carrying `Authorization: Bearer
<METRICS_TOKEN>`; without the setting it is off (404), so a deployment exposes nothing by default.
"""

from __future__ import annotations

import hmac
import os
import time

from django.conf import settings
from django.db import connection
from django.http import Http404, HttpResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Histogram,
    generate_latest,
)
from prometheus_client.multiprocess import MultiProcessCollector

from rummy_ledger.api.deadline import request_deadline
from rummy_ledger.metrics import MULTIPROC_ENV, Readings

REQUEST_SECONDS = Histogram(
    "rummy_http_request_duration_seconds",
    "Time to answer a request, by route (the URL's name, not its path), method and status.",
    ["route", "method", "status"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 6, 10),
)


class RequestMetricsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        route = (match.view_name or match.route) if match else "unmatched"
        REQUEST_SECONDS.labels(route, request.method, str(response.status_code)).observe(
            time.perf_counter() - started
        )
        return response


_readings = CollectorRegistry(auto_describe=False)
_readings.register(Readings())


def _events() -> CollectorRegistry:
    """This process's own registry, or every process's files summed under `serve`."""
    if not os.environ.get(MULTIPROC_ENV):
        return REGISTRY
    registry = CollectorRegistry()
    MultiProcessCollector(registry)
    return registry


def operator_token_offered(request) -> bool:
    """The request carries `METRICS_TOKEN` as its bearer token (never, without the setting):
    it may read what the service says of itself (metrics, the errors behind /readyz)."""
    token = settings.METRICS_TOKEN
    offered = request.headers.get("Authorization", "")
    return bool(token) and hmac.compare_digest(offered.encode(), f"Bearer {token}".encode())


def metrics_view(request):
    if not settings.METRICS_TOKEN:
        raise Http404("metrics are off (METRICS_TOKEN is not set)")
    if not operator_token_offered(request):
        response = HttpResponse(
            "a bearer token is required\n", status=401, content_type="text/plain"
        )
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    # A frozen database: the readings are left out at the deadline, the rest is answered.
    with request_deadline(settings.REQUEST_DEADLINE_SECONDS) as watch:
        body = generate_latest(_events()) + generate_latest(_readings)
    if watch.abandoned:
        connection.close()
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)
