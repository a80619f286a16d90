import importlib

import pytest
from django.apps import apps as django_apps
from django.contrib.auth.models import Group, User

from tests.conftest import funded_player

ROLES = ("finance viewer", "finance operator", "finance approver")


def ensure_roles() -> None:
    """The finance groups come from a data migration; a transactional test elsewhere in the run
    (or in an earlier run with --reuse-db) flushes them away, so put them back the same way."""
    if Group.objects.filter(name__in=ROLES).count() == len(ROLES):
        return
    migration = importlib.import_module("wallets.migrations.0004_finance_roles_indexes")
    migration.roles_create(django_apps, None)


def staff(username: str, *groups: str, superuser: bool = False) -> User:
    ensure_roles()
    user = User.objects.create_user(
        username=username, password=None, is_staff=True, is_superuser=superuser
    )
    user.groups.add(*Group.objects.filter(name__in=groups))
    return User.objects.get(pk=user.pk)  # fresh permission cache


@pytest.fixture
def viewer(db):
    return staff("viewer", "finance viewer")


@pytest.fixture
def operator(db):
    return staff("operator", "finance operator")


@pytest.fixture
def approver(db):
    return staff("approver", "finance approver")


@pytest.fixture
def approver2(db):
    return staff("approver2", "finance approver")


@pytest.fixture
def superuser(db):
    return staff("root", superuser=True)


@pytest.fixture
def alice(db):
    return funded_player("alice", "500.00")


# --- games ------------------------------------------------------------------------------------

from tests.tournaments.conftest import LOSER_50, WINNER, res, template  # noqa: E402
from tournaments.services.games import game_open  # noqa: E402
from tournaments.services.settlement import deal_settle, deal_store  # noqa: E402
from wallets.api_keys import api_client_create  # noqa: E402


@pytest.fixture
def game_server(db):
    return api_client_create(name="game-server-1", scopes=["games"])[0]


def points_game(client, game_id: str, players=("a", "b", "c", "d"), settle: bool = True):
    """A points game of four funded players; settled (finished) unless `settle` is False."""
    from tournaments.models import GameTemplate

    if not GameTemplate.objects.filter(slug="points-2").exists():
        template("points-2", "points")
    for p in players:
        funded_player(p, "500.00")
    game_open(client=client, game_id=game_id, template_slug="points-2", players=list(players))
    a, b, c, d = players
    payload = {
        "deal_no": 1,
        "wild_joker": "KD",
        "results": [
            res(a, "declared", WINNER),
            res(b, "first_drop"),
            res(c, "middle_drop"),
            res(d, "lost", LOSER_50, claimed_points=45),
        ],
    }
    deal, _ = deal_store(client=client, game_id=game_id, payload=payload, enqueue=False)
    if settle:
        deal_settle(deal_id=deal.pk)
    from tournaments.models import Game

    return Game.objects.get(client=client, game_id=game_id)
