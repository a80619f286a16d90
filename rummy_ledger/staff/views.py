"""The second factor's pages under /admin/: verify (a code from the authenticator or a recovery
code) and enrol (first sign-in: the QR code, then the recovery codes, shown once). Thin: the
rules are in second_factor.py."""

from __future__ import annotations

from base64 import b32encode

from axes.handlers.proxy import AxesProxyHandler
from django import forms
from django.contrib import admin
from django.contrib.auth import logout
from django.contrib.auth.signals import user_login_failed
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect
from django_otp import login as otp_login

from rummy_ledger.staff import second_factor
from rummy_ledger.staff.audit import audit_record
from rummy_ledger.staff.models import AuditKind


class CodeForm(forms.Form):
    code = forms.CharField(
        max_length=32,
        label="Code",
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "autofocus": True}),
    )


def _next_url(request: HttpRequest) -> str:
    wanted = request.POST.get("next") or request.GET.get("next") or ""
    safe = url_has_allowed_host_and_scheme(
        wanted, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return wanted if safe and wanted.startswith("/") else reverse("admin:index")


def _page(request: HttpRequest, template: str, **context) -> HttpResponse:
    context = {**admin.site.each_context(request), "next": _next_url(request), **context}
    return render(request, template, context)


def _signed_in(view):
    """Only a signed-in member of staff; the second factor's pages are theirs alone."""

    def wrapped(request: HttpRequest) -> HttpResponse:
        if not (request.user.is_authenticated and request.user.is_staff):
            return redirect_to_login(request.get_full_path(), reverse("admin:login"))
        return view(request)

    return never_cache(csrf_protect(wrapped))


def _refused(request: HttpRequest, form: CodeForm) -> None:
    """A wrong code counts as a failed sign-in (django-axes): once the username is locked out,
    the session is signed out and axes' lockout answer is given."""
    username = request.user.get_username()
    user_login_failed.send(
        sender=__name__, credentials={"username": username, "second_factor": True}, request=request
    )
    form.add_error("code", "That code is not right (or was used already). Try the next one.")
    if getattr(request, "axes_locked_out", False) or AxesProxyHandler.is_locked(
        request, {"username": username}
    ):
        logout(request)
        request.axes_locked_out = True  # AxesMiddleware answers with its lockout page


@_signed_in
def verify(request: HttpRequest) -> HttpResponse:
    user = request.user
    if not second_factor.enrolled(user):
        return redirect(f"{reverse('staff-enrol')}?{request.GET.urlencode()}")
    form = CodeForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        code = second_factor.code_clean(form.cleaned_data["code"])
        device = second_factor.code_verify(user, code) if code else None
        if device is not None:
            otp_login(request, device)
            audit_record(AuditKind.SECOND_FACTOR, actor=user, detail=device.name, request=request)
            return redirect(_next_url(request))
        _refused(request, form)
    return _page(request, "staff/verify.html", form=form, title="Second factor")


@_signed_in
def enrol(request: HttpRequest) -> HttpResponse:
    user = request.user
    if second_factor.enrolled(user):
        return redirect(f"{reverse('staff-verify')}?{request.GET.urlencode()}")
    device = second_factor.enrolment_device(user)
    form = CodeForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        code = second_factor.code_clean(form.cleaned_data["code"])
        codes = second_factor.enrolment_confirm(user, device, code) if code else None
        if codes is not None:
            otp_login(request, device)
            audit_record(AuditKind.SECOND_FACTOR_ENROLLED, actor=user, request=request)
            return _page(request, "staff/recovery_codes.html", codes=codes, title="Recovery codes")
        _refused(request, form)
    context = {
        "form": form,
        "qr": second_factor.qr_svg(device),
        "secret": b32encode(device.bin_key).decode(),
    }
    return _page(request, "staff/enrol.html", title="Set up your second factor", **context)
