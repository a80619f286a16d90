"""`escrow`: money between the players' wallets and a game's escrow. What goes in (every seat's
entry or none, bonus only up to its cap, everyone short named), what a settlement releases (at
most two transfers a game, refunds back to the buckets they came from) and that it balances to
the paisa."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import transaction
from djmoney.money import Money
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import bonus_granted, escrow_balance, funded_player, move
from tests.tournaments.games.services.tables import POINTS, opened
from tests.wallets.invariants import ledger_violations
from tournaments.games.queries import seating
from tournaments.games.services.escrow import (
    PlayersShort,
    Release,
    entries_collect,
    entries_short,
    entry_plans,
    entry_requests,
    fee_account_id,
    release_post,
    settlement_release,
)
from tournaments.models import Game, GamePlayer
from tournaments.payouts import Settlement, cancel_settlement, largest_remainder, points_settlement
from wallets.errors import InsufficientFunds
from wallets.models import Account, BonusLot, Bucket, Entry, Player, Transfer
from wallets.money.amounts import PAISA, ZERO
from wallets.services.transfers import transfers_post

ORDER = ("bonus", "deposit", "winnings")


def _balances(*players: str) -> dict[tuple[str, str], Decimal]:
    accounts = Account.objects.filter(player__external_id__in=players, kind=Account.Kind.PLAYER)
    return {(a.player.external_id, a.bucket): a.balance.amount for a in accounts}


def _seats(game: Game) -> list[GamePlayer]:
    return list(game.players.select_related("player").order_by("seat"))


@pytest.mark.django_db
def test_an_entry_is_planned_bucket_by_bucket_with_bonus_up_to_its_cap():
    # given a with 50.00 deposit and 100.00 of bonus, b with 500.00, c with deposit and winnings
    a = funded_player("a", "50.00")[Bucket.DEPOSIT].player_id
    bonus_granted("a", "100.00")
    b = funded_player("b", "500.00")[Bucket.DEPOSIT].player_id
    c_accounts = funded_player("c", "30.00")
    move(c_accounts[Bucket.DEPOSIT], c_accounts[Bucket.WINNINGS], "10.00", key="c-won")
    c = c_accounts[Bucket.DEPOSIT].player_id

    # when an entry of 60.00 is planned, at most 10 % of it from bonus
    plans = entry_plans(player_ids=[a, b, c], order=ORDER, amount=Decimal("60"), cap_percent=10)

    # then a could pay 6.00 of bonus and 50.00 of deposit: 4.00 short; b and c have plans
    assert plans.short == {a: Decimal("4.00"), c: Decimal("30.00")}
    assert plans.plans == {b: [("deposit", Decimal("60"))]}
    assert set(plans.lots) == {a}  # the lots of the players with bonus, locked


@pytest.mark.django_db
def test_an_entry_planned_from_accounts_read_already_takes_no_bonus():
    accounts = funded_player("a", "100.00")
    bonus_granted("a", "100.00")
    player = accounts[Bucket.DEPOSIT].player_id
    read = {(player, bucket): account for bucket, account in accounts.items()}

    plans = entry_plans(
        player_ids=[player], order=ORDER, amount=Decimal("50"), cap_percent=10, accounts=read
    )

    assert plans.plans == {player: [("deposit", Decimal("50"))]}
    assert plans.lots == {}


@pytest.mark.django_db
def test_entries_are_collected_from_every_seat_into_the_escrow(server_client):
    # given an open points game (a stake of 80.00 each, collected at its opening)
    game = opened(server_client, "g", POINTS, ("a", "b"))
    seats = _seats(game)

    # when a second entry is collected
    collected = entries_collect(game=game, seats=seats, amount=Decimal("80.00"), entry_no=2)

    # then both paid it into the escrow, each under its own key, recorded on the seats
    assert collected == Decimal("160.00")
    assert escrow_balance(game) == Decimal("320.00")
    assert _balances("a", "b")[("a", "deposit")] == Decimal("340.00")
    keys = Transfer.objects.filter(kind=Transfer.Kind.ENTRY, idempotency_key__endswith=":2")
    assert sorted(keys.values_list("idempotency_key", flat=True)) == [
        f"game:{game.pk}:entry:a:2",
        f"game:{game.pk}:entry:b:2",
    ]
    assert [s.contributed for s in seats] == [[["deposit", "160.00"]]] * 2
    assert ledger_violations() == []


@pytest.mark.django_db
def test_no_entry_is_collected_when_anyone_is_short_and_everyone_short_is_named(server_client):
    # given a game whose players a and c have 20.00 left, and b 420.00
    game = opened(server_client, "g", POINTS, ("a", "b", "c"))
    for player in ("a", "c"):
        accounts = Account.objects.filter(player__external_id=player, kind="player")
        pending = accounts.get(bucket=Bucket.PENDING)  # in no entry order: never spendable
        move(accounts.get(bucket=Bucket.DEPOSIT), pending, "400.00", key=f"{player}-out")
    before, transfers = _balances("a", "b", "c"), Transfer.objects.count()

    # when a second entry of 80.00 is collected
    with pytest.raises(PlayersShort) as refused:
        entries_collect(game=game, seats=_seats(game), amount=Decimal("80.00"), entry_no=2)

    # then the refusal names a and c, and nothing moved
    assert refused.value.details == {"players": ["a", "c"], "amount": "80.00", "currency": "INR"}
    assert _balances("a", "b", "c") == before
    assert Transfer.objects.count() == transfers
    assert escrow_balance(game) == Decimal("240.00")


@pytest.mark.django_db
def test_a_concurrent_spend_found_by_the_ledger_names_the_player_short(server_client):
    # given entry transfers planned while a had the money
    game = opened(server_client, "g", POINTS, ("a", "b"))
    seats = _seats(game)
    plans = entry_plans(
        player_ids=[s.player_id for s in seats], order=ORDER, amount=Decimal("80"), cap_percent=10
    )
    requests = entry_requests(game=game, seats=seats, plans=plans, amount=Decimal("80"), entry_no=2)
    deposit = Account.objects.get(player__external_id="a", bucket=Bucket.DEPOSIT)
    winnings = Account.objects.get(player__external_id="a", bucket=Bucket.WINNINGS)
    move(deposit, winnings, "400.00", key="a-spends")  # spent before the entry posts

    # when they post, the ledger refuses the overdraft
    with pytest.raises(InsufficientFunds) as ledger, transaction.atomic():  # its own savepoint
        transfers_post(requests=requests)

    # then the refusal names a, and the escrow holds the first entries only
    short = entries_short(ledger.value, Decimal("80"), game)
    assert isinstance(short, PlayersShort) and short.details["players"] == ["a"]
    assert escrow_balance(game) == Decimal("160.00")


def _release(game: Game, result: Settlement) -> tuple[Release, list[GamePlayer]]:
    """What empties the game's escrow by `result`, and its seats as settlement reads them."""
    seated = seating([game.pk])
    seats = seated.seats[game.pk]
    release = settlement_release(
        game=game, seats=seats, accounts=seated.accounts, settlement=result, fee_id=None
    )
    return release, seats


# a wins a two-player points game in which b counts 22 points (22.00); 10 % fee
B_LOST_22 = points_settlement(
    stakes={"a": Decimal("80.00"), "b": Decimal("80.00")},
    points={"a": 0, "b": 22},
    winner="a",
    point_value=Decimal("1.00"),
    fee_percent=Decimal("10.00"),
)


@pytest.mark.django_db
def test_a_settlement_releases_the_escrow_in_two_transfers_to_the_paisa(server_client):
    # given a points game: b lost 22 points (22.00), 10 % fee
    game = opened(server_client, "g", POINTS, ("a", "b"))

    # when its release is posted
    release, seats = _release(game, B_LOST_22)
    posted = release_post(release)

    # then prizes and fee in one transfer, refunds in the other, and the escrow is empty
    assert [r.idempotency_key for r in release.requests] == [
        f"game:{game.pk}:settlement",
        f"game:{game.pk}:refunds",
    ]
    assert [Transfer.objects.get(pk=p.transfer_id).kind for p in posted] == ["settlement", "refund"]
    assert escrow_balance(game) == ZERO
    balances = _balances("a", "b")
    assert balances[("a", "winnings")] == Decimal("19.80")
    assert balances[("a", "deposit")] == Decimal("500.00")
    assert balances[("b", "deposit")] == Decimal("478.00")
    fee_entries = Entry.objects.filter(transfer_id=posted[0].transfer_id, account=fee_account_id())
    assert [e.amount.amount for e in fee_entries] == [Decimal("2.20")]  # a platform sink's entry
    assert (game.paid_out, game.refunded, game.fee) == (
        Decimal("19.80"), Decimal("138.00"), Decimal("2.20")
    )  # fmt: skip
    assert [(s.payout, s.refund) for s in seats] == [
        (Decimal("19.80"), Decimal("80.00")),
        (ZERO, Decimal("58.00")),
    ]
    assert ledger_violations() == []


@pytest.mark.django_db
def test_a_release_posted_twice_pays_once(server_client):
    # given a release posted
    game = opened(server_client, "g", POINTS, ("a", "b"))
    release, _ = _release(game, B_LOST_22)
    first = release_post(release)
    balances, transfers = _balances("a", "b"), Transfer.objects.count()

    # when it is posted again
    again = release_post(release)

    # then the ledger returns the first transfers and nothing moves
    assert [p.transfer_id for p in again] == [p.transfer_id for p in first]
    assert not any(p.created for p in again)
    assert _balances("a", "b") == balances and Transfer.objects.count() == transfers


@pytest.mark.django_db
def test_a_refund_returns_bonus_to_its_bucket_and_its_lot(server_client):
    # given a game whose entry took 8.00 (the 10 % cap) from a's bonus lot of 50.00
    bonus_granted("a", "50.00")
    game = opened(server_client, "g", POINTS, ("a", "b"))
    assert _balances("a")[("a", "bonus")] == Decimal("42.00")
    seats = _seats(game)
    paid = {s.player.external_id: sum(Decimal(x) for _, x in s.contributed) for s in seats}

    # when the game is cancelled: everything goes back
    release, _ = _release(game, cancel_settlement(contributed=paid))
    release_post(release)

    # then a's bonus is back in the bucket and in the lot, the deposit part in the deposit
    balances = _balances("a")
    assert balances[("a", "bonus")] == Decimal("50.00")
    assert balances[("a", "deposit")] == Decimal("500.00")
    assert BonusLot.objects.get(player__external_id="a").remaining == Decimal("50.00")
    assert escrow_balance(game) == ZERO
    assert ledger_violations() == []


# --- what a release adds up to, whatever the split (no database) --------------------------------

paise = st.integers(min_value=0, max_value=50_000).map(lambda n: Decimal(n) * PAISA)
contribution = st.fixed_dictionaries(
    {}, optional={"bonus": paise, "deposit": paise, "winnings": paise}
).filter(lambda c: sum(c.values(), ZERO) > 0)


@settings(max_examples=200, deadline=None)
@given(
    paid=st.lists(contribution, min_size=2, max_size=6),
    kept=st.lists(st.integers(0, 100), min_size=6, max_size=6),
    weights=st.lists(st.integers(0, 5), min_size=6, max_size=6),
    fee_share=st.integers(0, 100),
)
def test_a_release_balances_to_the_paisa_whatever_the_split(paid, kept, weights, fee_share):
    """Any settlement of what was paid in (refunds up to each seat's entry, a fee, the rest as
    prizes by any weights) is released by transfers that each sum to zero, take out of the
    escrow exactly what went in, refund each seat exactly its refund and never more of a bucket
    than it paid from it, and pay prizes to winnings and the fee to the fee account."""
    # given seats that paid in from these buckets, and a settlement of all of it
    game = Game(id=7, game_id="g", escrow_id=1000, currency="INR")
    seats = [
        GamePlayer(game=game, player=Player(id=n, external_id=f"p{n}"), contributed=[
            [bucket, str(amount)] for bucket, amount in c.items()
        ])
        for n, c in enumerate(paid, start=1)
    ]  # fmt: skip
    accounts = {n: {b: n * 10 + i for i, b in enumerate(ORDER)} for n in range(1, len(paid) + 1)}
    totals = {s.player.external_id: sum(c.values(), ZERO) for s, c in zip(seats, paid, strict=True)}
    refunds = {p: (t * kept[n] / 100).quantize(PAISA) for n, (p, t) in enumerate(totals.items())}
    pot = sum(totals.values(), ZERO) - sum(refunds.values(), ZERO)
    fee = (pot * fee_share / 100).quantize(PAISA)
    shares = largest_remainder(pot - fee, weights[: len(seats)])
    settlement = Settlement(
        payouts=dict(zip(totals, shares, strict=True)), refunds=refunds, fee=fee
    )

    # when
    release = settlement_release(
        game=game, seats=seats, accounts=accounts, settlement=settlement, fee_id=1
    )

    # then
    assert len(release.requests) <= 2
    legs = [leg for r in release.requests for leg in r.legs]
    for request in release.requests:
        assert sum((leg.amount.amount for leg in request.legs), ZERO) == ZERO
    assert -sum((leg.amount.amount for leg in legs if leg.account_id == 1000), ZERO) == sum(
        totals.values(), ZERO
    )
    by_account = {}
    for leg in legs:
        if leg.account_id != 1000:
            by_account[leg.account_id] = by_account.get(leg.account_id, ZERO) + leg.amount.amount
    assert by_account.get(1, ZERO) == fee
    for n, (seat, c) in enumerate(zip(seats, paid, strict=True), start=1):
        ext = seat.player.external_id
        prize = shares[n - 1]
        back = {b: by_account.get(accounts[n][b], ZERO) for b in ORDER}
        back["winnings"] -= prize
        assert sum(back.values(), ZERO) == refunds[ext]
        assert all(back[b] <= c.get(b, ZERO) for b in ORDER)
        assert (seat.payout, seat.refund) == (prize, refunds[ext])
    returned = sum((r.amount for r in release.bonus_returns), ZERO)
    assert returned == sum((by_account.get(accounts[n]["bonus"], ZERO) for n in accounts), ZERO)
    assert game.paid_out + game.refunded + game.fee == sum(totals.values(), ZERO)
    assert all(isinstance(leg.amount, Money) and leg.amount.currency.code == "INR" for leg in legs)
