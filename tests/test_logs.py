"""Logs: an expected 4xx answer is one line at WARNING, with its reason, never a
traceback (Django attaches one to PermissionDenied, BadRequest and SuspiciousOperation, and logs
the last at ERROR); a 5xx keeps its traceback."""

from __future__ import annotations

import io
import logging
from contextlib import contextmanager

import pytest
from django.test import Client
from django.urls import reverse

from tests.builders import staff, staff_client

pytestmark = pytest.mark.django_db


def request_records(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith(("django.request", "django.security"))]


@contextmanager
def console_output():
    """What the service's console handler (settings.LOGGING) writes, while the block runs."""
    handler = next(h for h in logging.getLogger().handlers if h.get_name() == "console")
    stream = io.StringIO()
    previous = handler.setStream(stream)
    try:
        yield stream
    finally:
        handler.setStream(previous)


def test_a_refused_admin_page_is_one_warning_line_without_a_traceback(caplog):
    client = staff_client(staff("viewer", "finance viewer"))

    with caplog.at_level(logging.INFO), console_output() as out:
        response = client.get(reverse("admin:wallets_adjustment_add"))

    assert response.status_code == 403
    (record,) = request_records(caplog)
    assert record.levelno == logging.WARNING and record.exc_info is None
    assert record.getMessage() == "Forbidden (Permission denied): /admin/wallets/adjustment/add/"
    assert out.getvalue().splitlines() == [record.getMessage()]


def test_a_refused_api_request_is_one_warning_line(caplog, games_api):
    with caplog.at_level(logging.INFO), console_output() as out:
        response = Client().get("/api/v1/templates", HTTP_AUTHORIZATION="Api-Key nope")

    assert response.status_code in (401, 403)
    (record,) = request_records(caplog)
    assert record.levelno == logging.WARNING and record.exc_info is None
    assert "Traceback" not in out.getvalue() and len(out.getvalue().splitlines()) == 1


def test_a_disallowed_host_is_one_warning_line_not_an_error_with_a_traceback():
    with console_output() as out:
        response = Client().get("/admin/", HTTP_HOST="evil.example")

    assert response.status_code == 400
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and "Invalid HTTP_HOST header: 'evil.example'" in lines[0]


def test_a_server_error_keeps_its_traceback():
    from rummy_ledger.logs import ClientErrorsOnOneLine

    try:
        raise RuntimeError("boom")
    except RuntimeError:
        import sys

        record = logging.LogRecord(
            "django.request", logging.ERROR, __file__, 1, "Internal Server Error: %s", ("/x",),
            sys.exc_info(),
        )  # fmt: skip
    record.status_code = 500

    assert ClientErrorsOnOneLine().filter(record) is True
    assert record.exc_info is not None and record.levelno == logging.ERROR
