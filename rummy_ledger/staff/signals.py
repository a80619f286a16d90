"""Sign-ins, their failures and sign-outs into the audit list, and a staff session's start
(django.contrib.auth's signals: the admin's login form, and any other sign-in)."""

from __future__ import annotations

from django.contrib.auth.signals import user_logged_in, user_logged_out, user_login_failed

from rummy_ledger.staff.audit import audit_record
from rummy_ledger.staff.models import AuditKind
from rummy_ledger.staff.sessions import session_start


def signed_in(sender, request, user, **kwargs) -> None:
    if request is not None and hasattr(request, "session"):
        session_start(request)
    audit_record(AuditKind.SIGN_IN, actor=user, request=request)


def sign_in_failed(sender, credentials, request=None, **kwargs) -> None:
    second = bool(credentials.get("second_factor"))
    audit_record(
        AuditKind.SECOND_FACTOR_FAILED if second else AuditKind.SIGN_IN_FAILED,
        actor=credentials.get("username") or "",
        detail="wrong or used code" if second else "wrong username or password, or locked out",
        request=request,
    )


def signed_out(sender, request, user, **kwargs) -> None:
    if user is not None:
        audit_record(AuditKind.SIGN_OUT, actor=user, request=request)


def connect() -> None:
    user_logged_in.connect(signed_in, dispatch_uid="staff-signed-in")
    user_login_failed.connect(sign_in_failed, dispatch_uid="staff-sign-in-failed")
    user_logged_out.connect(signed_out, dispatch_uid="staff-signed-out")
