"""Logging that reads well in production.

An expected 4xx (a refused page, a malformed request, a host not allowed) is the client's
mistake answered as designed: one line at WARNING, with the reason, and no traceback. Django
attaches one to `PermissionDenied`, `BadRequest` and `SuspiciousOperation` (and logs the last at
ERROR); a 5xx keeps its traceback.
"""

from __future__ import annotations

import logging


class ClientErrorsOnOneLine(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if status is None or not 400 <= status < 500:
            return True
        if record.exc_info:
            reason = record.exc_info[1]
            message = record.getMessage()
            record.msg = f"{message}: {reason}" if str(reason or "") else message
            record.args = ()
            record.exc_info = None
            record.exc_text = None
        if record.levelno > logging.WARNING:
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True
