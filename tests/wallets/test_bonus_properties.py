"""Properties of bonus (hypothesis): no entry ever takes more bonus than its cap; expired bonus
always goes back to promotions; the bonus lots always add up to the bonus bucket's balance."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import bonus_granted, funded_player, make_api, template
from tests.wallets.invariants import ledger_violations
from tournaments.games.services.games import game_cancel
from tournaments.games.services.intake import deal_store
from tournaments.games.services.opening import game_open
from tournaments.games.services.settlement import waiting_settle
from tournaments.payouts import bonus_cap, charge_by_bucket
from wallets.errors import InsufficientFunds
from wallets.models import Account, BonusLot
from wallets.services.accounts import platform_accounts
from wallets.services.bonuses import bonus_expire
from wallets.services.transfers import balance

paise = st.decimals(min_value=Decimal("0.01"), max_value=Decimal("5000"), places=2)
percent = st.decimals(min_value=Decimal(0), max_value=Decimal(100), places=2)
buckets = st.permutations(["bonus", "deposit", "winnings"])


@given(
    balances=st.fixed_dictionaries({"bonus": paise, "deposit": paise, "winnings": paise}),
    order=buckets,
    stake=paise,
    cap_percent=percent,
)
def test_no_entry_takes_more_bonus_than_its_cap(balances, order, stake, cap_percent):
    cap = bonus_cap(stake, cap_percent)
    plan = charge_by_bucket(balances, order, stake, {"bonus": cap})

    assert cap <= stake * cap_percent / 100 and cap == cap.quantize(Decimal("0.01"))
    if plan is not None:
        taken = dict(plan)
        assert taken.get("bonus", 0) <= cap
        assert sum(taken.values()) == stake
        assert all(taken[b] <= balances[b] for b in taken)
    else:  # refused only when the buckets, bonus capped, really do not hold it
        assert min(balances["bonus"], cap) + balances["deposit"] + balances["winnings"] < stake


def bonus_held(player: str) -> Decimal:
    return Account.objects.get(code=f"player:{player}:bonus").balance.amount


def lots_hold(player: str) -> Decimal:
    lots = BonusLot.objects.filter(player__external_id=player)
    return lots.aggregate(total=Sum("remaining"))["total"] or Decimal(0)


def promotions() -> Decimal:
    return balance(account=platform_accounts()["promotions"]).amount


grant = st.tuples(
    st.just("grant"), st.decimals(Decimal("0.01"), Decimal("80"), places=2), st.integers(-3, 3)
)
entry = st.tuples(
    st.just("open"), st.decimals(Decimal("1"), Decimal("200"), places=2), st.integers(0, 100)
)
operation = st.one_of(grant, entry, st.just(("cancel",)), st.just(("expire",)))


@pytest.mark.django_db
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations=st.lists(operation, min_size=1, max_size=15))
def test_any_sequence_keeps_lots_equal_to_the_bucket_and_returns_what_expired(operations):
    with transaction.atomic():
        _, client = make_api("games", name="prop-server")
        funded_player("p", "2000.00")
        funded_player("q", "2000.00")
        open_games: list[str] = []
        for n, op in enumerate(operations):
            if op[0] == "grant":
                _, amount, hours = op
                posted = bonus_granted("p", str(amount), key=f"prop-{n}")
                BonusLot.objects.filter(transfer_id=posted.transfer_id).update(
                    expires_at=timezone.now() + timedelta(hours=hours, minutes=1)
                )
            elif op[0] == "open":
                _, fee, cap_percent = op
                slug = f"t{n}"
                template(slug, "pool101", entry_fee=fee, bonus_cap_percent=cap_percent)
                before = bonus_held("p")
                try:
                    with transaction.atomic():
                        game_open(
                            client=client, game_id=slug, template_slug=slug, players=["p", "q"]
                        )
                except InsufficientFunds:
                    continue
                open_games.append(slug)
                taken = before - bonus_held("p")
                assert 0 <= taken <= bonus_cap(fee, Decimal(cap_percent))
            elif op[0] == "cancel" and open_games:
                game_cancel(client=client, game_id=open_games.pop())
            elif op[0] == "expire":
                now = timezone.now()
                due = BonusLot.objects.filter(expires_at__lte=now, remaining__gt=0)
                due_total = due.aggregate(total=Sum("remaining"))["total"] or Decimal(0)
                promoted = promotions()
                bonus_expire(now=now)
                assert promotions() - promoted == due_total
                assert not BonusLot.objects.filter(expires_at__lte=now, remaining__gt=0).exists()
            assert lots_hold("p") == bonus_held("p")
        assert ledger_violations() == []
        transaction.set_rollback(True)


loss = st.tuples(
    st.just("play"),
    st.sampled_from([("first_drop", 20), ("middle_drop", 40)]),
    st.sampled_from(["p", "q"]),  # who loses
    st.integers(1, 300).map(lambda n: Decimal(n) / 100),  # point value
    st.integers(0, 100),  # bonus cap percent
)


@pytest.mark.django_db
@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations=st.lists(st.one_of(grant, loss), min_size=1, max_size=12))
def test_no_loss_takes_more_bonus_than_the_entrys_cap_share(operations):
    """Whatever the sequence of bonus grants, entries and losses, a settled
    loss takes bonus at most in the cap's share of what was lost, and the lots follow."""
    with transaction.atomic():
        _, client = make_api("games", name="prop-server")
        for player in ("p", "q"):
            funded_player(player, "2000.00")
        for n, op in enumerate(operations):
            if op[0] == "grant":
                bonus_granted(["p", "q"][n % 2], str(op[1]), key=f"prop-{n}")
                continue
            _, (outcome, points), loser, point_value, cap_percent = op
            winner = "q" if loser == "p" else "p"
            slug = f"t{n}"
            template(slug, "points", point_value=point_value, bonus_cap_percent=cap_percent)
            before = bonus_held(loser)
            try:
                with transaction.atomic():
                    game_open(client=client, game_id=slug, template_slug=slug, players=["p", "q"])
            except InsufficientFunds:
                continue
            results = [
                {"player": loser, "outcome": outcome},
                {"player": winner, "outcome": "declared"},
            ]
            deal_store(
                client=client,
                game_id=slug,
                payload={"deal_no": 1, "wild_joker": "KD", "results": results},
            )
            waiting_settle()

            lost_bonus = before - bonus_held(loser)
            assert 0 <= lost_bonus <= bonus_cap(points * point_value, Decimal(cap_percent))
            for player in ("p", "q"):
                assert lots_hold(player) == bonus_held(player)
        assert ledger_violations() == []
        transaction.set_rollback(True)
