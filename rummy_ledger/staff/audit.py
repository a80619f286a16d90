"""`audit_record`: the one way an audit event is written, in the caller's transaction (a proposal
rolled back leaves no audit row claiming it was made)."""

from __future__ import annotations

from django.http import HttpRequest
from django.utils import timezone

from rummy_ledger.staff.models import AuditEvent, AuditKind


def audit_record(
    kind: AuditKind,
    *,
    actor: object = None,
    subject: str = "",
    detail: str = "",
    request: HttpRequest | None = None,
) -> AuditEvent:
    """Record one event. `actor` is a user or a username (None: nobody signed in); text is cut
    to its column (an audit row is never refused for being long)."""
    name = getattr(actor, "get_username", lambda: actor)() or ""
    return AuditEvent.objects.create(
        at=timezone.now(),
        kind=kind,
        actor=str(name)[:150],
        subject=subject[:200],
        detail=detail[:500],
        address=request_address(request),
    )


def request_address(request: HttpRequest | None) -> str | None:
    """The client's address as the server saw it (REMOTE_ADDR: behind a proxy, the proxy's
    own unless the proxy is trusted to set it)."""
    if request is None:
        return None
    return request.META.get("REMOTE_ADDR") or None
