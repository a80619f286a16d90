"""gunicorn's own refusals, from a real gunicorn started the way `serve` starts it
(rummy_ledger/api/worker.py): a NUL in a header (400) and a request line over 4,094 bytes (414) are
the JSON envelope, not gunicorn's HTML page."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import pytest
from django.conf import settings

from rummy_ledger.api.codes import all_codes
from rummy_ledger.api.worker import _REFUSALS
from rummy_ledger.dev.management.commands.serve import WEB_WORKER

pytestmark = pytest.mark.timeout(120)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _raw(port: int, request: bytes) -> tuple[int, dict[str, str], bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin1").split("\r\n")
    headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines)}
    return int(status_line.split()[1]), headers, body


@pytest.fixture(scope="module")
def gunicorn():
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "rummy_ledger.wsgi", "--bind", f"127.0.0.1:{port}",
         "--workers", "1", "--worker-class", WEB_WORKER],
        cwd=settings.BASE_DIR, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, "gunicorn exited"
            try:
                status, _, _ = _raw(port, b"GET /api/v1/nope HTTP/1.0\r\n\r\n")
                if status == 404:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, "gunicorn does not answer"
            time.sleep(0.2)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=30)


def _assert_envelope(answer, status: int, code: str) -> None:
    got, headers, body = answer
    assert got == status, (got, body[:200])
    assert headers["content-type"] == "application/json", headers
    assert int(headers["content-length"]) == len(body)
    error = json.loads(body)["error"]
    assert error["code"] == code and error["message"] and error["details"] == {}


def test_a_nul_in_a_header_is_a_400_envelope(gunicorn):
    request = b"GET /api/v1/templates HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Probe: a\x00b\r\n\r\n"

    _assert_envelope(_raw(gunicorn, request), 400, "bad_request")


def test_a_request_line_over_4094_bytes_is_a_414_envelope(gunicorn):
    request = b"GET /api/v1/" + b"a" * 4100 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

    answer = _raw(gunicorn, request)

    _assert_envelope(answer, 414, "uri_too_long")
    assert b"aaaa" not in answer[2]  # nothing of the request reflected


def test_more_header_fields_than_gunicorn_takes_is_a_431_envelope(gunicorn):
    fields = b"".join(b"X-F%d: v\r\n" % n for n in range(120))  # its limit: 100 fields
    request = b"GET /api/v1/templates HTTP/1.1\r\nHost: 127.0.0.1\r\n" + fields + b"\r\n"

    _assert_envelope(_raw(gunicorn, request), 431, "request_headers_too_large")


def test_the_application_still_answers_through_that_worker(gunicorn):
    request = b"GET /api/v1/templates HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"

    _assert_envelope(_raw(gunicorn, request), 401, "not_authenticated")


def test_every_code_the_worker_answers_is_in_the_catalogue():
    assert {code for code, _ in _REFUSALS.values()} <= set(all_codes())
