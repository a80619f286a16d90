"""Satellites' money and terms: seats taken from the pool first, money rows sharing the rest,
the bubble, ties across the last seat (pure, hypothesis); the refusals of a satellite's terms."""

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rummy_ledger.api.keys import api_client_create
from tests.tournaments.tournament_builders import scheduled, tournament_file
from tournaments.errors import TermsInvalid
from tournaments.payouts import (
    TICKET,
    PrizeRow,
    RankGroup,
    prizes_by_player,
    rank_prizes,
    ticket_winners,
)
from tournaments.tournaments.services.setup import tournament_fields_checked
from tournaments.tournaments.services.terms_changes import tournament_change_checked
from tournaments.tournaments.terms import prizes_of
from wallets.errors import ProposalInvalid

D = Decimal


@pytest.fixture
def lobby_client(db):
    return api_client_create(name="lobby", scopes=["games"])[0]


SEATS = PrizeRow(1, 2, None, TICKET, "main-100")


def test_seats_first_then_money_rows_share_what_is_left():
    rows = [SEATS, PrizeRow(3, 3, D("60")), PrizeRow(4, 4, D("40"))]
    assert rank_prizes(D("250.00"), rows, D("100.00")) == [D(100), D(100), D(30), D(20)]


def test_without_money_rows_the_bubble_takes_what_is_left():
    assert rank_prizes(D("230.00"), [SEATS], D("100.00")) == [D(100), D(100), D(30)]
    with pytest.raises(ValueError):
        rank_prizes(D("199.99"), [SEATS], D("100.00"))


def test_a_tie_across_the_last_seat_shares_its_value_in_money():
    groups = [RankGroup(1, ("a",)), RankGroup(2, ("b", "c")), RankGroup(4, ("d",))]
    prizes = rank_prizes(D("230.00"), [SEATS], D("100.00"))
    assert ticket_winners(groups, 2) == {"a"}
    assert prizes_by_player(groups, prizes) == {"a": 100, "b": 65, "c": 65, "d": 0}
    # a tie wholly within the seats: a ticket each
    assert ticket_winners([RankGroup(1, ("a", "b"))], 2) == {"a", "b"}


@given(
    seats=st.integers(1, 5),
    seat=st.integers(1, 10_000),
    extra=st.integers(0, 100_000),
    money=st.lists(st.integers(1, 50), max_size=4),
)
def test_prizes_add_up_to_the_pool_and_seats_get_the_seat_value(seats, seat, extra, money):
    seat_value = D(seat) / 100
    pool = seats * seat_value + D(extra) / 100
    rows = [PrizeRow(1, seats, None, TICKET, "t")]
    if money:
        weights = [D(m) for m in money]
        shares = [w * 100 / sum(weights) for w in weights]
        if any(s.as_tuple().exponent < -2 for s in shares):
            return
        shares[-1] = D(100) - sum(shares[:-1])
        rows += [PrizeRow(seats + i + 1, seats + i + 1, s) for i, s in enumerate(shares)]
    prizes = rank_prizes(pool, rows, seat_value)
    assert sum(prizes) == pool and all(p >= 0 for p in prizes)
    assert prizes[:seats] == [seat_value] * seats


def test_ticket_rows_parse_and_refuse():
    rows = prizes_of([{"ranks": "1-2", "kind": "ticket", "tournament": "main-100"}])
    assert rows == (SEATS,)
    for bad in (
        [{"ranks": "1-2", "kind": "ticket", "tournament": "m", "percent": "10.00"}],
        [{"ranks": "1", "kind": "seat", "percent": "100.00"}],
        [{"ranks": "1", "kind": "ticket"}],
    ):
        with pytest.raises(TermsInvalid):
            prizes_of(bad)


@pytest.mark.django_db
def test_a_satellites_terms_are_refused_unless_the_target_fits(lobby_client):
    scheduled(slug="main-100", rebuy=None)
    base = dict(slug="sat", entry_fee="10.00", guarantee="200.00", rebuy=None, min_players=3)
    seats = [{"ranks": "1-2", "kind": "ticket", "tournament": "main-100"}]

    def refused(**overrides) -> str:
        with pytest.raises(TermsInvalid) as caught:
            tournament_fields_checked(tournament_file(**{**base, "prizes": seats, **overrides}))
        return str(caught.value.message)

    assert tournament_fields_checked(tournament_file(**base, prizes=seats)).terms.target == (
        "main-100"
    )
    assert refused(guarantee="199.99").startswith("guarantee: the guarantee must cover")
    assert refused(currency="CHP", fee_percent="0.00").startswith("prizes:")
    scheduled(slug="free", rebuy=None, entry_fee="0.00", guarantee="100.00")
    free = [{"ranks": "1-2", "kind": "ticket", "tournament": "free"}]
    assert "a freeroll" in refused(prizes=free)
    assert refused(prizes=[{"ranks": "1-2", "kind": "ticket", "tournament": "nope"}]) == (
        "prizes: no tournament 'nope' of this client"
    )
    assert "ticket rows come first" in refused(
        prizes=[{"ranks": "1", "percent": "100.00"}, {**seats[0], "ranks": "2-3"}]
    )
    assert "no more ranks than min_players" in refused(min_players=2, prizes=[
        {**seats[0]}, {"ranks": "3", "percent": "100.00"}
    ])  # fmt: skip


@pytest.mark.django_db
def test_the_targets_entry_fee_is_fixed_while_a_satellite_pays_seats_in_it(lobby_client):
    target = scheduled(slug="main-100", rebuy=None)
    scheduled(
        slug="sat", entry_fee="10.00", guarantee="200.00", rebuy=None, min_players=3,
        prizes=[{"ranks": "1-2", "kind": "ticket", "tournament": "main-100"}],
    )  # fmt: skip
    change = dict(fee_percent="15.00", guarantee="500.00", rebuy=None,
                  prizes=[{"ranks": "1", "percent": "100.00"}])  # fmt: skip
    with pytest.raises(ProposalInvalid, match="entry fee no longer changes"):
        tournament_change_checked(tournament=target, entry_fee="120.00", **change)
    tournament_change_checked(tournament=target, entry_fee="100.00", **change)


@pytest.mark.django_db
def test_a_prize_row_the_database_refuses(lobby_client):
    from django.db import IntegrityError, transaction

    from tournaments.models import TournamentPrize

    t = scheduled(slug="main-100", rebuy=None)
    for kind, percent, target in (
        ("ticket", D("10"), t),
        ("money", D("10"), t),
        ("money", None, None),
    ):
        with pytest.raises(IntegrityError), transaction.atomic():
            TournamentPrize.objects.create(
                tournament=t, rank_from=9, rank_to=9, kind=kind, percent=percent, target=target
            )
