"""Finance's tournament pages in a real browser, per role: the list (status, players, pool,
overlay) and a tournament's page (registrations with what each paid by bucket, rounds, results
and prizes), read-only for everyone."""

import pytest

from rummy_ledger.api.keys import api_client_create
from tests.builders import bonus_granted, funded_player
from tests.tournaments.tournament_builders import scheduled
from tournaments.models import Tournament
from tournaments.services import tournament_entries as entries
from tournaments.services import tournament_rounds as rounds

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def finished():
    client, _ = api_client_create(name="lobby", scopes=["games"])
    scheduled(rounds=[{"final": True}], max_players=6, rebuy=None)
    bonus_granted("ana", "50.00")
    for p in ("ana", "bo", "cy", "di"):
        funded_player(p, "500.00")
        entries.registration_create(client=client, slug="sunday-100", player=p)
    rounds.tournament_start(client=client, slug="sunday-100")
    table = {"table": "F", "standings": [
        {"player": p, "position": n, "chips": 0} for n, p in enumerate(["cy", "ana", "bo", "di"], 1)
    ]}  # fmt: skip
    stored = rounds.round_store(client=client, slug="sunday-100", number=1, tables=[table])
    rounds.round_settle(round_id=stored.pk)
    return Tournament.objects.get()


@pytest.mark.parametrize("role", ["viewer", "operator", "approver"])
def test_finance_sees_the_tournaments_and_their_money(login, finished, role):
    tab = login(role)
    tab.visit("/admin/tournaments/tournament/", f"tournaments--{role}")
    row = tab.page.locator("#result_list tbody tr", has_text="sunday-100").inner_text()
    assert "Finished" in row and "₹500.00" in row and "₹160.00" in row  # pool, overlay
    tab.page.click("#result_list tbody tr a:has-text('sunday-100')")
    tab.shot(f"tournament--{role}")
    text = tab.text()
    assert "₹10.00 from bonus, ₹90.00 from deposit" in text  # ana: the bonus cap of 10 %
    assert "₹250.00" in text  # cy, rank 1: 50 % of the 500 pool
    assert tab.page.locator("input[type=submit][name=_save]").count() == 0
