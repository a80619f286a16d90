"""How long a staff session lasts: it ends after STAFF_IDLE_MINUTES without a request and after
STAFF_SESSION_HOURS in all, whatever it does. The session keeps when it signed in and when it
was last seen (written at most once a minute: a page's burst of requests writes it once)."""

from __future__ import annotations

import time

from django.conf import settings
from django.http import HttpRequest

SIGNED_IN = "staff_signed_in_at"
SEEN = "staff_seen_at"
SEEN_RESOLUTION_SECONDS = 60


def session_start(request: HttpRequest) -> None:
    """At sign-in (user_logged_in)."""
    now = int(time.time())
    request.session[SIGNED_IN] = now
    request.session[SEEN] = now


def session_over(request: HttpRequest) -> str | None:
    """Why the signed-in session has ended (idle, or too long in all), else None; a session
    still going is marked seen."""
    now = int(time.time())
    started = request.session.setdefault(SIGNED_IN, now)
    seen = request.session.get(SEEN, started)
    if now - started >= settings.STAFF_SESSION_HOURS * 3600:
        return f"signed in for {settings.STAFF_SESSION_HOURS} hours"
    if now - seen >= settings.STAFF_IDLE_MINUTES * 60:
        return f"idle for {settings.STAFF_IDLE_MINUTES} minutes"
    if now - seen >= SEEN_RESOLUTION_SECONDS:
        request.session[SEEN] = now
    return None
