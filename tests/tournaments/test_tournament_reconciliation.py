"""The tournaments' reconciliation checks: books that do not balance, escrow left over, a
tournament running too long."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db.models import F
from django.utils import timezone

from rummy_ledger.api.keys import api_client_create
from tests.builders import funded_player
from tests.tournaments.tournament_builders import scheduled
from tournaments.models import Registration, Tournament
from tournaments.tournaments.services import entries, rounds
from wallets.models import Discrepancy, Entry, Transfer
from wallets.reconciliation.runner import reconcile_run

pytestmark = pytest.mark.django_db


def kinds() -> set[str]:
    report = reconcile_run(trigger="command")
    return set(Discrepancy.objects.filter(report=report).values_list("kind", flat=True))


def played(client, before_the_final=lambda: None) -> Tournament:
    scheduled(rounds=[{"final": True}], max_players=6, rebuy=None)
    for p in ("a", "b", "c", "d"):
        funded_player(p, "500.00")
        entries.registration_create(client=client, slug="sunday-100", player=p)
    rounds.tournament_start(client=client, slug="sunday-100")
    before_the_final()
    final = [{"table": "F", "standings": [
        {"player": p, "position": n, "chips": 0} for n, p in enumerate("abcd", 1)
    ]}]  # fmt: skip
    stored = rounds.round_store(client=client, slug="sunday-100", number=1, tables=final)
    assert rounds.round_settle(round_id=stored.pk) is True
    assert rounds.round_settle(round_id=stored.pk) is False  # a second run pays nothing
    assert rounds.round_settle(round_id=stored.pk + 1000) is False  # a stale message: nothing
    return Tournament.objects.get()


def test_a_played_tournament_is_clean_and_tampering_is_reported(settings):
    client, _ = api_client_create(name="lobby", scopes=["games"])
    tournament = played(client)
    # 400 collected, 60 fee, 340 < the 500 guarantee: overlay 160
    assert (tournament.fee, tournament.overlay, tournament.prizes_paid) == (
        Decimal("60.00"), Decimal("160.00"), Decimal("500.00"),
    )  # fmt: skip
    assert not kinds() & {"tournament_unbalanced", "tournament_escrow_not_empty"}
    # the books themselves cannot disagree (a CHECK constraint); the players' prizes can
    Registration.objects.filter(rank=1).update(prize=F("prize") + 1)
    assert "tournament_unbalanced" in kinds()


def test_a_tournament_running_too_long_is_stuck(settings):
    client, _ = api_client_create(name="lobby", scopes=["games"])
    scheduled(min_players=2, prizes=[{"ranks": "1", "percent": "100.00"}])
    for p in ("a", "b"):
        funded_player(p, "500.00")
        entries.registration_create(client=client, slug="sunday-100", player=p)
    rounds.tournament_start(client=client, slug="sunday-100")
    assert "tournament_stuck" not in kinds()
    Tournament.objects.update(started_at=timezone.now() - timedelta(hours=25))
    assert "tournament_stuck" in kinds()


def test_legs_over_the_ledger_maximum_are_split(settings):
    client, _ = api_client_create(name="lobby", scopes=["games"])

    def lower_the_maximum():
        settings.LEDGER_MAX_TRANSFER = Decimal("150.00")

    tournament = played(client, lower_the_maximum)
    paid = Transfer.objects.filter(idempotency_key__startswith=f"tournament:{tournament.pk}:")
    payout = paid.filter(kind=Transfer.Kind.SETTLEMENT)
    assert sorted(t.idempotency_key.split(":", 2)[2] for t in payout) == sorted(
        ["fee"] + [f"prize:{r.pk}" for r in Registration.objects.filter(prize__gt=0)]
    )  # one transfer for the fee and one per prize (three ranks paid), in one call
    amounts = [abs(e.amount.amount) for t in payout for e in t.entries.all()]
    assert max(amounts) == Decimal("150.00")
    winner = Registration.objects.get(rank=1)
    assert (winner.prize, funded_player("a", "0")["winnings"].balance.amount) == (
        Decimal("250.00"), Decimal("250.00"),
    )  # fmt: skip
    assert not kinds() & {"tournament_unbalanced", "tournament_escrow_not_empty"}


def test_tickets_outstanding_are_the_active_tickets(settings):
    from tournaments.models import Ticket

    client, _ = api_client_create(name="lobby", scopes=["games"])
    target = scheduled(slug="main-100", rebuy=None)
    scheduled(
        rounds=[{"final": True}], max_players=6, rebuy=None, guarantee="200.00",
        prizes=[{"ranks": "1-2", "kind": "ticket", "tournament": "main-100"}],
    )  # fmt: skip
    for p in ("a", "b", "c", "d"):
        funded_player(p, "500.00")
        entries.registration_create(client=client, slug="sunday-100", player=p)
    rounds.tournament_start(client=client, slug="sunday-100")
    final = [{"table": "F", "standings": [
        {"player": p, "position": n, "chips": 0} for n, p in enumerate("abcd", 1)
    ]}]  # fmt: skip
    stored = rounds.round_store(client=client, slug="sunday-100", number=1, tables=final)
    rounds.round_settle(round_id=stored.pk)
    target.refresh_from_db()
    assert target.tickets_account.balance.amount == Decimal("200.00")
    assert Ticket.objects.filter(status="active").count() == 2
    assert "tickets_outstanding" not in kinds()
    Ticket.objects.filter(player__external_id="a").update(status="expired")
    assert "tickets_outstanding" in kinds()


def test_lapsed_tickets_go_to_promotions_and_a_started_target_pays_seats_in_money(settings):
    from tournaments.models import Ticket
    from wallets.models import PlatformAccount
    from wallets.services.accounts import platform_accounts

    client, _ = api_client_create(name="lobby", scopes=["games"])
    scheduled(
        slug="main-100", rebuy=None, min_players=2, tickets_unused="lapse",
        prizes=[{"ranks": "1", "percent": "100.00"}],
    )  # fmt: skip
    for slug in ("sat-a", "sat-b"):
        scheduled(
            slug=slug, rounds=[{"final": True}], max_players=6, rebuy=None, guarantee="200.00",
            prizes=[{"ranks": "1-2", "kind": "ticket", "tournament": "main-100"}],
        )  # fmt: skip
    players = {"sat-a": "abcd", "sat-b": "efgh"}
    for slug, names in players.items():
        for p in names:
            funded_player(p, "500.00")
            entries.registration_create(client=client, slug=slug, player=p)
        rounds.tournament_start(client=client, slug=slug)

    def final(slug):
        tables = [{"table": "F", "standings": [
            {"player": p, "position": n, "chips": 0} for n, p in enumerate(players[slug], 1)
        ]}]  # fmt: skip
        stored = rounds.round_store(client=client, slug=slug, number=1, tables=tables)
        rounds.round_settle(round_id=stored.pk)

    final("sat-a")
    for p in ("a", "c"):
        entries.registration_create(client=client, slug="main-100", player=p)
    rounds.tournament_start(client=client, slug="main-100")
    lapsed = Entry.objects.filter(
        account=platform_accounts()[PlatformAccount.PROMOTIONS],
        transfer__idempotency_key__endswith=":lapse",
    )
    assert [e.amount.amount for e in lapsed] == [Decimal("100.00")]  # b's, back to promotions
    assert dict(Ticket.objects.values_list("player__external_id", "status")) == {
        "a": "used", "b": "expired",
    }  # fmt: skip
    final("sat-b")  # the target has started: its seats are paid in money
    assert funded_player("e", "0")["winnings"].balance.amount == Decimal("100.00")
    assert not Ticket.objects.filter(player__external_id__in="efgh").exists()
    assert "tickets_outstanding" not in kinds()
