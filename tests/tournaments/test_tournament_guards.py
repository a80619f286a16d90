"""The per-client guards (docs/trust-model.md) hold for tournament entries too: the hourly escrow
cap counts them with the client's game entries."""

from decimal import Decimal

import pytest

from rummy_ledger.api.keys import api_client_create
from tests.builders import funded_player
from tests.tournaments.tournament_builders import scheduled
from tournaments.models import Registration
from tournaments.tournaments.services import entries
from wallets.errors import ClientCapReached

pytestmark = pytest.mark.django_db


def test_the_hourly_escrow_cap_counts_tournament_entries():
    client, _ = api_client_create(name="lobby", scopes=["games"])
    client.hourly_escrow_cap = Decimal("150.00")
    client.save(update_fields=["hourly_escrow_cap"])
    scheduled()
    for p in ("a", "b"):
        funded_player(p, "500.00")
    entries.registration_create(client=client, slug="sunday-100", player="a")
    with pytest.raises(ClientCapReached):
        entries.registration_create(client=client, slug="sunday-100", player="b")
    assert funded_player("b", "0")["deposit"].balance.amount == Decimal("500.00")
    assert not Registration.objects.filter(player__external_id="b").exists()
