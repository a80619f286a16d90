"""Staff sign-in in a real browser: a password alone reaches no admin page for anyone who can
move money (and for viewers when the setting asks), the first sign-in enrols an authenticator
from a QR code and shows recovery codes once, a wrong or replayed code is refused, a recovery
code works once, guessing codes locks the username out (django-axes), and a superuser resets a
lost device. Few tests, each walking a whole story, to keep within the browser budget."""

from __future__ import annotations

import re
import time
from base64 import b32decode

import pytest
from django_otp.oath import TOTP
from django_otp.plugins.otp_totp.models import TOTPDevice

from rummy_ledger.staff.models import AuditEvent, AuditKind
from tests.browser.conftest import (
    PASSWORD,
    ROLES,
    Tab,
    password_sign_in,
    second_factor_pass,
)
from tests.builders import authenticator, staff, totp_code

pytestmark = pytest.mark.django_db(transaction=True)

GUARDED_PAGES = ["/admin/", "/admin/wallets/adjustment/", "/admin/staff/auditevent/"]


@pytest.fixture
def fresh_tab(chromium, live_server, transactional_db):
    """`fresh_tab(role)` -> a Tab of a new staff user at the login form, nothing entered yet."""
    contexts = []

    def open_fresh(role: str, username: str | None = None) -> Tab:
        user = staff(username or f"new-{role}", *ROLES[role], superuser=role == "superuser")
        user.set_password(PASSWORD)
        user.save(update_fields=["password"])
        context = chromium.new_context(viewport={"width": 1366, "height": 900})
        contexts.append(context)
        tab = Tab(context.new_page(), role, live_server.url, user)
        tab.page.goto(f"{live_server.url}/admin/login/?next=/admin/")
        return tab

    yield open_fresh
    for context in contexts:
        context.close()


def sign_out(tab: Tab) -> None:
    with tab.page.expect_navigation():
        tab.page.click("#logout-form button")


def code_of(tab: Tab) -> str:
    """What the person's phone shows after scanning the enrolment page's QR code (its key)."""
    secret = tab.text("#enrol-secret")
    return f"{TOTP(b32decode(secret), 30, 0, 6, 0).token():06d}"


def throttle_wait(failures: int) -> None:
    """django-otp throttles a device after a wrong code: the next try within 1 s (doubling with
    each failure) is refused whatever it is. A person retyping takes longer than that."""
    time.sleep(2 ** (failures - 1) + 0.2)


def wrong_code(device_or_secret) -> str:
    """A code that is no code of the device now (the next step's is never accepted early
    beyond the tolerance of one step: two steps ahead is)."""
    return totp_code(device_or_secret, steps_ahead=5)


def test_a_password_alone_reaches_no_admin_page(fresh_tab, settings):
    settings.STAFF_OTP_REQUIRED_FOR_VIEWERS = True
    for role in ["viewer", "operator", "approver", "superuser"]:
        tab = fresh_tab(role)
        password_sign_in(tab)
        assert "/admin/second-factor/enrol/" in tab.page.url, (role, tab.page.url)
        for page in GUARDED_PAGES:
            tab.page.goto(tab.base_url + page)
            assert "/admin/second-factor/enrol/" in tab.page.url, (role, page, tab.page.url)
            assert "Scan this code" in tab.text()
        tab.check()
    # a viewer, when the setting does not ask, signs in with the password alone (read-only)
    settings.STAFF_OTP_REQUIRED_FOR_VIEWERS = False
    viewer = fresh_tab("viewer", "plain-viewer")
    password_sign_in(viewer)
    assert viewer.page.url == f"{viewer.base_url}/admin/"
    viewer.check()


def test_enrol_then_wrong_replayed_and_recovery_codes(fresh_tab):
    tab = fresh_tab("approver")
    password_sign_in(tab)
    assert tab.page.locator("#enrol-qr svg").is_visible()
    tab.shot("second-factor-enrol")
    second_factor_pass(tab, None, code="000000" if code_of(tab) != "000000" else "111111")
    assert "not right" in tab.text()  # a wrong code: still on the enrolment page
    throttle_wait(1)
    code = code_of(tab)
    second_factor_pass(tab, None, code=code)
    codes = tab.page.locator("#recovery-codes code").all_inner_texts()
    assert len(codes) == 10 and len(set(codes)) == 10
    tab.shot("second-factor-recovery-codes")
    tab.page.click("#continue")
    assert tab.page.url == f"{tab.base_url}/admin/"

    # signed out and in again: the code just used is refused (replay), a wrong one too
    device = TOTPDevice.objects.get(user=tab.user, confirmed=True)
    sign_out(tab)
    tab.page.goto(f"{tab.base_url}/admin/login/?next=/admin/")
    password_sign_in(tab)
    assert "/admin/second-factor/?" in tab.page.url
    tab.shot("second-factor-verify")
    for refused in (code, wrong_code(device)):
        second_factor_pass(tab, None, code=refused)
        assert "not right" in tab.text(), refused
        tab.page.goto(f"{tab.base_url}/admin/")  # and no admin page yet
        assert "/admin/second-factor/" in tab.page.url

    # a recovery code passes once
    throttle_wait(2)
    second_factor_pass(tab, None, code=codes[0])
    assert tab.page.url == f"{tab.base_url}/admin/"
    sign_out(tab)
    tab.page.goto(f"{tab.base_url}/admin/login/?next=/admin/")
    password_sign_in(tab)
    second_factor_pass(tab, None, code=codes[0])
    assert "not right" in tab.text()
    tab.check()
    kinds = list(AuditEvent.objects.filter(actor=tab.user.username).values_list("kind", flat=True))
    assert kinds.count(AuditKind.SECOND_FACTOR_FAILED) == 4
    assert AuditKind.SECOND_FACTOR_ENROLLED in kinds and kinds.count(AuditKind.SECOND_FACTOR) == 1


def test_guessing_codes_locks_the_username_out(fresh_tab):
    tab = fresh_tab("operator")
    device = authenticator(tab.user)
    password_sign_in(tab)
    with tab.refused(429), tab.refused(404):  # the lockout's plain page: no favicon link
        for _ in range(5):
            second_factor_pass(tab, None, code=wrong_code(device))
        assert "account locked" in tab.text("body").lower()
        # signed out: the admin asks for the password again, and the right one is refused now
        tab.page.goto(f"{tab.base_url}/admin/login/?next=/admin/")
        password_sign_in(tab)
        assert "account locked" in tab.text("body").lower()
    tab.check()


def test_a_superuser_resets_a_lost_device(login, fresh_tab):
    tab = fresh_tab("operator", "lost-phone")
    device = authenticator(tab.user)
    root = login("superuser")
    root.visit("/admin/auth/user/?q=lost-phone", "users")
    root.page.check("input[name=_selected_action]")
    root.page.select_option("select[name=action]", "second_factor_reset_action")
    with root.page.expect_navigation():
        root.page.click("button[name=index]")
    assert "sets up a second factor at the next sign-in" in root.messages()
    root.shot("users-second-factor-reset")
    # of their own: refused
    root.visit(f"/admin/auth/user/?q={root.user.username}", "users-self")
    root.page.locator(f"tr:has-text('{root.user.username}') input[name=_selected_action]").check()
    root.page.select_option("select[name=action]", "second_factor_reset_action")
    with root.page.expect_navigation():
        root.page.click("button[name=index]")
    assert "another superuser" in root.messages()

    assert not TOTPDevice.objects.filter(pk=device.pk).exists()
    password_sign_in(tab)
    assert "/admin/second-factor/enrol/" in tab.page.url  # enrols anew
    reset = AuditEvent.objects.get(kind=AuditKind.SECOND_FACTOR_RESET)
    assert (reset.actor, reset.subject) == (root.user.username, "user lost-phone")
    assert re.search(r"\d+ device records removed", reset.detail)
