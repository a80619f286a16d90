"""Fixtures of the events tests: the payment gateway and a game server (in-process API clients),
and finance's two roles."""

from __future__ import annotations

import pytest

from tests.builders import Server, make_api, staff
from tests.wallets.payments import Gateway
from wallets.roles import APPROVER, OPERATOR


@pytest.fixture
def gateway(db):
    return Gateway(make_api("payments", name="gateway")[0])


@pytest.fixture
def server(db):
    return Server()


@pytest.fixture
def finance(db):
    return staff("op", OPERATOR), staff("ap", APPROVER)
