"""The second factor (django-otp): a TOTP device per member of staff, and ten recovery codes (its
static device, each code good once). Who needs one: every staff user who can do more than view
(operators, approvers, superusers: any permission that is not a `view_` one), and viewers too
when STAFF_OTP_REQUIRED_FOR_VIEWERS is set.

A code is checked by the device itself: a TOTP code is good once (django-otp keeps the last step
verified and refuses it again), a device that keeps failing is throttled, and each failure also
counts as a failed sign-in for django-axes (views.py), which locks the username out.
"""

from __future__ import annotations

import re
import secrets

import segno
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django_otp import match_token
from django_otp.models import Device
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from rummy_ledger.staff.audit import audit_record
from rummy_ledger.staff.models import AuditKind

AUTHENTICATOR = "authenticator"
RECOVERY = "recovery codes"
RECOVERY_CODES = 10
CODE_PATTERN = re.compile(r"^[0-9a-z]{6,16}$")  # a TOTP code's 6 digits, a recovery code's 16


class ResetRefused(Exception):
    """A reset asked by someone who may not (not a superuser, or of their own device)."""


def second_factor_required(user: AbstractBaseUser) -> bool:
    if not (user.is_authenticated and user.is_staff):
        return False
    if user.is_superuser or settings.STAFF_OTP_REQUIRED_FOR_VIEWERS:
        return True
    return any(not perm.split(".", 1)[1].startswith("view_") for perm in user.get_all_permissions())


def code_clean(text: str) -> str | None:
    """A code as typed (spaces and case forgiven), or None when it cannot be one."""
    code = re.sub(r"\s", "", text or "").lower()
    return code if CODE_PATTERN.match(code) else None


def enrolled(user: AbstractBaseUser) -> bool:
    return TOTPDevice.objects.filter(user=user, confirmed=True).exists()


def enrolment_device(user: AbstractBaseUser) -> TOTPDevice:
    """The authenticator being enrolled: one unconfirmed device, its secret kept until
    confirmed (a reload shows the same QR code)."""
    device = TOTPDevice.objects.filter(user=user, confirmed=False).first()
    return device or TOTPDevice.objects.create(user=user, name=AUTHENTICATOR, confirmed=False)


def qr_svg(device: TOTPDevice) -> str:
    """The device's otpauth:// URI as an inline SVG QR code."""
    return segno.make(device.config_url, error="m").svg_inline(scale=5, border=2)


@transaction.atomic
def enrolment_confirm(user: AbstractBaseUser, device: TOTPDevice, code: str) -> list[str] | None:
    """Confirm the authenticator with a code it shows; on success, new recovery codes (shown
    once: only the device keeps them). None when the code is wrong."""
    if not device.verify_token(code):
        return None
    device.confirmed = True
    device.save(update_fields=["confirmed"])
    return recovery_codes_new(user)


def recovery_codes_new(user: AbstractBaseUser) -> list[str]:
    StaticDevice.objects.filter(user=user).delete()
    device = StaticDevice.objects.create(user=user, name=RECOVERY, confirmed=True)
    codes = [secrets.token_hex(8) for _ in range(RECOVERY_CODES)]
    StaticToken.objects.bulk_create(StaticToken(device=device, token=code) for code in codes)
    return codes


def code_verify(user: AbstractBaseUser, code: str) -> Device | None:
    """The confirmed device (authenticator or recovery codes) the code passes, else None."""
    return match_token(user, code)


@transaction.atomic
def second_factor_reset(user: AbstractBaseUser, *, by: AbstractBaseUser, request=None) -> None:
    """A lost device: another superuser removes the member's devices (they enrol again at their
    next sign-in, and a session verified by the old device is verified no more), logged."""
    if not by.is_superuser or by.pk == user.pk:
        raise ResetRefused("another superuser resets a member's second factor")
    removed = TOTPDevice.objects.filter(user=user).delete()[0]
    removed += StaticDevice.objects.filter(user=user).delete()[0]
    audit_record(
        AuditKind.SECOND_FACTOR_RESET,
        actor=by,
        subject=f"user {user.get_username()}",
        detail=f"{removed} device records removed; enrols again at the next sign-in",
        request=request,
    )
