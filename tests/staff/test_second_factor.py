"""The second factor and the session's limits through the test client (the browser walks the
same pages in tests/browser/test_staff_sign_in.py)."""

from __future__ import annotations

import time

import pytest
from django.test import Client

from tests.builders import authenticator, staff, staff_client, totp_code

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"


def password_client(role_groups=("finance operator",), superuser=False, name="op") -> Client:
    user = staff(name, *role_groups, superuser=superuser)
    user.set_password(PASSWORD)
    user.save()
    client = Client()
    response = client.post("/admin/login/?next=/admin/", {"username": name, "password": PASSWORD})
    assert response.status_code == 302, response.content[:500]
    client.user = user
    return client


def test_a_code_passes_once():
    client = password_client()
    device = authenticator(client.user)
    assert client.get("/admin/")["Location"].startswith("/admin/second-factor/?next=")
    code = totp_code(device)
    response = client.post("/admin/second-factor/?next=/admin/", {"code": code, "next": "/admin/"})
    assert response.status_code == 302 and response["Location"] == "/admin/", response.content[
        -800:
    ]
    assert client.get("/admin/").status_code == 200


def test_a_replayed_code_is_refused():
    client = password_client()
    device = authenticator(client.user)
    code = totp_code(device)
    assert client.post("/admin/second-factor/", {"code": code})["Location"] == "/admin/"
    client.post("/admin/logout/")
    again = Client()
    again.post("/admin/login/", {"username": "op", "password": PASSWORD})
    refused = again.post("/admin/second-factor/", {"code": code})
    assert refused.status_code == 200 and "not right" in refused.content.decode()
    assert again.get("/admin/").status_code == 302


@pytest.mark.parametrize(
    ("groups", "superuser", "viewers_too", "required"),
    [
        (("finance viewer",), False, False, False),
        (("finance viewer",), False, True, True),
        (("finance operator",), False, False, True),
        (("finance approver",), False, False, True),
        ((), True, False, True),
    ],
)
def test_who_needs_a_second_factor(settings, groups, superuser, viewers_too, required):
    settings.STAFF_OTP_REQUIRED_FOR_VIEWERS = viewers_too
    client = password_client(groups, superuser=superuser)
    index = client.get("/admin/")
    if required:
        assert index.status_code == 302
        assert index["Location"] == "/admin/second-factor/enrol/?next=%2Fadmin%2F"
    else:
        assert index.status_code == 200


def test_a_session_ends_after_the_idle_time_and_after_its_hours(settings):
    settings.STAFF_IDLE_MINUTES, settings.STAFF_SESSION_HOURS = 15, 8
    from rummy_ledger.staff.sessions import SEEN, SIGNED_IN

    for signed_in_ago, seen_ago, ends in [
        (60, 14 * 60, False),
        (60 * 60, 16 * 60, True),  # idle 16 minutes
        (8 * 3600 + 5, 30, True),  # busy, but 8 hours in all
    ]:
        client = staff_client(staff(f"u{signed_in_ago}", "finance operator"))
        session = client.session
        now = int(time.time())
        session[SIGNED_IN], session[SEEN] = now - signed_in_ago, now - seen_ago
        session.save()
        response = client.get("/admin/")
        if ends:
            assert response.status_code == 302 and response["Location"].startswith(
                "/admin/login/?next="
            )
            assert client.get("/admin/").status_code == 302  # signed out, not just sent away
        else:
            assert response.status_code == 200


def test_a_reset_is_another_superusers():
    from rummy_ledger.staff.second_factor import ResetRefused, second_factor_reset

    root, other = staff("root", superuser=True), staff("root2", superuser=True)
    operator = staff("op2", "finance operator")
    authenticator(root), authenticator(operator)
    with pytest.raises(ResetRefused):
        second_factor_reset(root, by=root)
    with pytest.raises(ResetRefused):
        second_factor_reset(root, by=operator)
    second_factor_reset(operator, by=other)
    assert not operator.totpdevice_set.exists() and root.totpdevice_set.exists()
