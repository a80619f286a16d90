import pytest
from djmoney.money import Money
from rest_framework.test import APIClient

from wallets.api_keys import api_client_create
from wallets.ledger import Leg, Posted, transfer_post
from wallets.models import CASH, Account
from wallets.services import deposit_register, player_accounts, player_get_or_create


def make_api(*scopes: str, name: str = "server") -> tuple[APIClient, object]:
    client, key = api_client_create(name=name, scopes=list(scopes))
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Api-Key {key}")
    return api, client


@pytest.fixture
def games_api(db):
    return make_api("games", name="game-server-1")[0]


@pytest.fixture
def payments_api(db):
    return make_api("payments", name="gateway")[0]


def funded_player(external_id: str, amount: str = "1000.00"):
    """A registered player with `amount` INR in the deposit bucket; returns its accounts."""
    if amount != "0":
        deposit_register(
            player_external_id=external_id,
            amount=Money(amount, CASH),
            reference=f"fund-{external_id}-{amount}",
        )
    return player_accounts(player=player_get_or_create(external_id=external_id))


def move(source: Account, target: Account, amount, key: str, kind: str = "transfer") -> Posted:
    """Post `amount` INR (a decimal string or Decimal) from one account to another."""
    return transfer_post(
        kind=kind,
        reference=key,
        idempotency_key=key,
        legs=[Leg(source.pk, -Money(amount, CASH)), Leg(target.pk, Money(amount, CASH))],
    )


def pytest_sessionfinish(session, exitstatus):
    """Leave no embedded broker running that this session started (the database stops itself)."""
    from rummy_ledger import embedded
    from tests.tournaments.worker import STARTED_BROKER

    for data_dir in STARTED_BROKER:
        embedded.stop_redis(data_dir)
