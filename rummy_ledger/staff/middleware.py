"""The admin's gate, after django-otp's OTPMiddleware: a signed-in session past its limits is
signed out (sessions.py), and a member of staff who needs a second factor (second_factor.py)
reaches no admin page but the second factor's own and sign-out until it is passed. Every
download a signed-in member of staff takes (a CSV) is an export in the audit list."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import urlencode

from rummy_ledger.staff.audit import audit_record
from rummy_ledger.staff.models import AuditKind
from rummy_ledger.staff.second_factor import enrolled, second_factor_required
from rummy_ledger.staff.sessions import session_over

OPEN_NAMES = ("admin:logout", "admin:login", "staff-verify", "staff-enrol")


class StaffAccessMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response
        # Reversed here, once, as the handler loads: the first `reverse()` of a process builds
        # the URL resolver's whole reverse table (about 0.1 s), and Django lets each thread that
        # finds it unbuilt build its own: done per request, a threaded server's first burst of
        # requests (sixty at once) spent seconds of the GIL on it and ran past the deadline.
        self.admin_prefix = reverse("admin:index")  # the API's requests pay one startswith
        self.open_paths = frozenset(reverse(name) for name in OPEN_NAMES)

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path.startswith(self.admin_prefix) and request.user.is_authenticated:
            refusal = self.refusal(request)
            if refusal is not None:
                return refusal
        response = self.get_response(request)
        if response.get("Content-Disposition", "").startswith("attachment"):
            export_record(request, response)
        return response

    def refusal(self, request: HttpRequest) -> HttpResponse | None:
        ended = session_over(request)
        if ended is not None:
            logout(request)
            messages.info(request, f"Your session ended ({ended}): sign in again.")
            return redirect_to_login(request.get_full_path(), reverse("admin:login"))
        user = request.user
        if user.is_verified() or not second_factor_required(user):
            return None
        if request.path in self.open_paths:
            return None
        page = "staff-verify" if enrolled(user) else "staff-enrol"
        return redirect(f"{reverse(page)}?{urlencode({'next': request.get_full_path()})}")


def export_record(request: HttpRequest, response: HttpResponse) -> None:
    filename = response["Content-Disposition"].partition("filename=")[2].strip('"')
    audit_record(
        AuditKind.EXPORT,
        actor=request.user,
        subject=filename,
        detail=request.get_full_path(),
        request=request,
    )
