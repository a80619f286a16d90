import pytest

from rummy_ledger.api.keys import api_client_create
from tests.builders import funded_player, staff
from wallets.roles import APPROVER, OPERATOR, VIEWER


@pytest.fixture
def viewer(db):
    return staff("viewer", VIEWER)


@pytest.fixture
def operator(db):
    return staff("operator", OPERATOR)


@pytest.fixture
def approver(db):
    return staff("approver", APPROVER)


@pytest.fixture
def approver2(db):
    return staff("approver2", APPROVER)


@pytest.fixture
def superuser(db):
    return staff("root", superuser=True)


@pytest.fixture
def alice(db):
    return funded_player("alice", "500.00")


@pytest.fixture
def game_server(db):
    return api_client_create(name="game-server-1", scopes=["games"])[0]
