"""`rounds.waiting_rounds_settle`: the stored rounds are the queue of `settle_waiting_rounds`.
Rounds are claimed oldest first with SKIP LOCKED (a round another transaction holds is not
waited for), one a transaction, for a bounded run; one that fails is left alone for a while and
holds up no other; a duplicated wake settles nothing twice."""

from __future__ import annotations

import pytest

from rummy_ledger.api.keys import api_client_create
from tests.builders import funded_player
from tests.tournaments.games.services.tables import while_held
from tests.tournaments.tournament_builders import scheduled, table
from tests.wallets.invariants import ledger_violations
from tournaments.models import TournamentRound
from tournaments.tournaments.services import entries, rounds
from wallets.models import Transfer


@pytest.fixture(autouse=True)
def _no_round_failing():
    rounds._failing = type(rounds._failing)()
    yield
    rounds._failing = type(rounds._failing)()


def _finals_stored(*slugs: str) -> list[TournamentRound]:
    """A one-round tournament per slug, four players each, its final's results stored."""
    client, _ = api_client_create(name="lobby", scopes=["games"])
    stored = []
    for n, slug in enumerate(slugs):
        scheduled(slug=slug, rounds=[{"final": True}], max_players=6, rebuy=None)
        players = [f"{slug}-{p}" for p in "abcd"]
        for player in players:
            funded_player(player, "500.00")
            entries.registration_create(client=client, slug=slug, player=player)
        rounds.tournament_start(client=client, slug=slug)
        final = table(f"F{n}", *((p, rank, 0) for rank, p in enumerate(players, 1)))
        stored.append(rounds.round_store(client=client, slug=slug, number=1, tables=[final]))
    return stored


def _status(*stored: TournamentRound) -> list[str]:
    return [TournamentRound.objects.get(pk=r.pk).status for r in stored]


def _prizes_paid() -> int:
    return Transfer.objects.filter(kind="settlement", reference__startswith="tournament:").count()


@pytest.mark.django_db
def test_stored_rounds_are_settled_once_however_often_woken():
    # given two tournaments' finals stored
    first, second = _finals_stored("t1", "t2")

    # when the queue is run, then run again (a duplicated wake)
    more = rounds.waiting_rounds_settle()
    paid = _prizes_paid()
    rounds.waiting_rounds_settle()

    # then both are settled, their prizes paid once
    assert more is False
    assert _status(first, second) == ["settled", "settled"]
    assert _prizes_paid() == paid > 0
    assert ledger_violations() == []


@pytest.mark.django_db
def test_a_run_stops_at_its_bound_oldest_round_first(settings):
    settings.SETTLEMENT_RUN_TRANSACTIONS = 1
    first, second = _finals_stored("t1", "t2")

    assert rounds.waiting_rounds_settle() is True  # the next run is woken
    assert _status(first, second) == ["settled", "stored"]
    assert rounds.waiting_rounds_settle() is True
    assert rounds.waiting_rounds_settle() is False
    assert _status(first, second) == ["settled", "settled"]


@pytest.mark.django_db
def test_a_round_that_fails_is_left_alone_and_holds_up_no_other(monkeypatch):
    # given two finals stored, the first one's settlement failing (a bug)
    bad, good = _finals_stored("t1", "t2")
    tried, settle = [], rounds.round_settle

    def failing_for_bad(*, round_id):
        tried.append(round_id)
        if round_id == bad.pk:
            raise ValueError("a bug")
        return settle(round_id=round_id)

    monkeypatch.setattr(rounds, "round_settle", failing_for_bad)

    # when the queue is run twice
    rounds.waiting_rounds_settle()
    rounds.waiting_rounds_settle()

    # then the other is settled; the bad one stays stored and is not tried again at once
    assert _status(bad, good) == ["stored", "settled"]
    assert tried == [bad.pk, good.pk]


@pytest.mark.django_db(transaction=True)
def test_a_round_locked_elsewhere_is_skipped_not_waited_for():
    # given two finals stored, the first one's row locked by another connection
    locked, other = _finals_stored("t1", "t2")

    # when a run comes meanwhile
    outcome = while_held(
        lambda: TournamentRound.objects.select_for_update().get(pk=locked.pk),
        rounds.waiting_rounds_settle,
    )

    # then it did not wait: it settled the other; the locked one waits for the next wake
    assert outcome is False
    assert _status(locked, other) == ["stored", "settled"]
    rounds.waiting_rounds_settle()
    assert _status(locked, other) == ["settled", "settled"]
    assert ledger_violations() == []
