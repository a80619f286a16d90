"""The wind-down (docs/regions-and-real-money.md) with tournaments: it cancels open cash tournaments
(every entry refunded where it came from) before it refunds the players; chips tournaments are
untouched."""

from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command

from rummy_ledger.api.keys import api_client_create
from tests.builders import funded_player, make_api
from tests.tournaments.tournament_builders import scheduled
from tests.wallets.wind_down import wind_down_approved
from tournaments.models import Tournament
from tournaments.tournaments.services.entries import registration_create
from wallets.models import Withdrawal

pytestmark = pytest.mark.django_db


def test_the_wind_down_cancels_open_cash_tournaments_and_refunds_their_entries(settings, tmp_path):
    # given: a cash tournament with two registered players, and a chips freeroll
    lobby, _ = api_client_create(name="lobby", scopes=["games"])
    make_api("payments", name="gateway")
    scheduled()
    scheduled(slug="chips-free", currency="CHP", entry_fee="0.00", fee_percent="0.00")
    for player in ("a", "b"):
        funded_player(player, "1000.00")
        registration_create(client=lobby, slug="sunday-100", player=player)
    settings.REAL_MONEY, settings.WIND_DOWN_GRACE_MINUTES = "off", 0
    wind_down_approved()

    # when: the plan, then the run
    plan, out = StringIO(), StringIO()
    csv = str(tmp_path / "out.csv")
    call_command("wind_down", "--client", "gateway", "--csv", csv, "--plan", stdout=plan)
    call_command("wind_down", "--client", "gateway", "--csv", csv, stdout=out)

    # then: the plan named it, the run cancelled it, and each entry came back to be refunded
    assert "1 open cash tournaments" in plan.getvalue()
    assert "1 cash tournaments" in out.getvalue()
    statuses = dict(Tournament.objects.values_list("slug", "status"))
    assert statuses == {"sunday-100": "cancelled", "chips-free": "registering"}
    refunds = Withdrawal.objects.filter(reference__startswith="wind-down-")
    assert sorted(refunds.values_list("player__external_id", "amount")) == [
        ("a", Decimal("1000.00")),
        ("b", Decimal("1000.00")),
    ]
