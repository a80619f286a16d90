"""The gunicorn worker `serve` runs: gunicorn's own refusals in the JSON envelope.

gunicorn refuses some requests before Django sees them (a NUL or other invalid character in a
header: 400; a request line over 4,094 bytes: 414; headers over its limits: 431) and answers
them with an HTML page of its own, written by `gunicorn.util.write_error`. It offers no hook for
that page, so this worker class replaces that one function in its process with one that writes
the envelope. The request line may not even have been read, so the path is unknown: every such
refusal is the envelope (the admin is a browser's, which never sends them). The message is fixed
per status: nothing of the refused request is reflected.
"""

from __future__ import annotations

import json

from gunicorn import util
from gunicorn.workers.sync import SyncWorker

# gunicorn's statuses, to the catalogue's codes (rummy_ledger.api.codes.ApiErrorCode; named as
# strings: this module is loaded by gunicorn before Django is set up).
_REFUSALS = {
    400: ("bad_request", "The request is malformed (refused by the web server)."),
    403: ("permission_denied", "The request is forbidden (refused by the web server)."),
    414: ("uri_too_long", "The request line is longer than the web server takes (4,094 bytes)."),
    417: ("bad_request", "The Expect header is not supported."),
    431: ("request_headers_too_large", "The request headers are larger than the server takes."),
    501: ("bad_request", "The transfer coding is not supported."),
}
_SERVER_ERROR = ("server_error", "Internal error; it has been logged.")


def envelope_error(sock, status_int: int, reason: str, mesg: str) -> None:
    """`gunicorn.util.write_error`, answering the envelope instead of HTML."""
    code, message = _REFUSALS.get(status_int, _SERVER_ERROR)
    body = json.dumps({"error": {"code": code, "message": message, "details": {}}}).encode()
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    util.write_nonblock(sock, head.encode("latin1") + body)


class EnvelopeErrorWorker(SyncWorker):
    def init_process(self):
        util.write_error = envelope_error  # gunicorn's workers call it through the module
        super().init_process()
