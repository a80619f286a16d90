from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import transaction
from django.utils import timezone
from djmoney.money import Money

from tests.builders import funded_player, move
from tests.wallets.invariants import ledger_violations
from wallets.errors import (
    AlreadyReversed,
    IdempotencyConflict,
    InsufficientFunds,
    LedgerError,
    UnknownAccount,
)
from wallets.models import CASH, CHIPS, Account, Entry, Transfer
from wallets.money.parsing import MoneyError
from wallets.services.accounts import platform_accounts
from wallets.services.transfers import (
    Leg,
    Posted,
    TransferRequest,
    balance,
    statement,
    transfer_post,
    transfer_reverse,
    transfers_post,
)

pytestmark = pytest.mark.django_db


def inr(amount: str) -> Money:
    return Money(amount, CASH)


def test_transfer_moves_money_and_keeps_invariants():
    # given
    alice, bob = funded_player("alice", "100.00"), funded_player("bob", "0")
    # when
    posted = move(alice["deposit"], bob["winnings"], "30.25", "t1")
    # then
    assert posted.created
    assert balance(account=alice["deposit"]) == inr("69.75")
    assert balance(account=bob["winnings"]) == inr("30.25")
    assert Transfer.objects.get(pk=posted.transfer_id).entries.count() == 2
    assert ledger_violations() == []


def test_same_key_same_content_returns_first_transfer():
    alice, bob = funded_player("alice", "100.00"), funded_player("bob", "0")
    first = move(alice["deposit"], bob["deposit"], "10.00", "k")
    again = move(alice["deposit"], bob["deposit"], "10.00", "k")
    assert again.transfer_id == first.transfer_id and not again.created
    assert balance(account=bob["deposit"]) == inr("10.00")


def test_same_key_different_content_is_refused():
    alice, bob = funded_player("alice", "100.00"), funded_player("bob", "0")
    move(alice["deposit"], bob["deposit"], "10.00", "k")
    with pytest.raises(IdempotencyConflict), transaction.atomic():
        move(alice["deposit"], bob["deposit"], "11.00", "k")
    assert balance(account=bob["deposit"]) == inr("10.00")


def test_overdraft_is_refused_naming_the_account_and_nothing_is_written():
    alice, bob = funded_player("alice", "5.00"), funded_player("bob", "0")
    transfers_before = Transfer.objects.count()
    with pytest.raises(InsufficientFunds) as refused, transaction.atomic():
        move(alice["deposit"], bob["deposit"], "5.01", "k")
    assert refused.value.details["accounts"] == ["player:alice:deposit"]
    assert Transfer.objects.count() == transfers_before
    assert balance(account=alice["deposit"]) == inr("5.00")


@pytest.mark.parametrize(
    ("amounts", "error"),
    [
        ([0.1, -0.1], MoneyError),  # floats
        ([Decimal("0.1"), Decimal("-0.1")], MoneyError),  # not Money
        ([inr("0.001"), inr("-0.001")], MoneyError),  # below a paisa
        ([inr("0"), inr("0")], LedgerError),  # zero legs
        ([inr("5"), inr("-4")], LedgerError),  # unbalanced
        ([inr("5"), Money("-5", CHIPS)], LedgerError),  # mixed currencies
    ],
)
def test_bad_amounts_are_refused_before_anything_is_written(amounts, error):
    alice, bob = funded_player("alice", "100.00"), funded_player("bob", "0")
    entries_before = Entry.objects.count()
    with pytest.raises(error):
        transfer_post(
            kind="transfer",
            reference="r",
            idempotency_key="bad",
            legs=[Leg(bob["deposit"].pk, amounts[0]), Leg(alice["deposit"].pk, amounts[1])],
        )
    assert Entry.objects.count() == entries_before


def test_unknown_account_and_wrong_currency_account_are_refused():
    alice = funded_player("alice", "100.00")
    with pytest.raises(UnknownAccount), transaction.atomic():
        transfer_post(
            kind="transfer",
            reference="r",
            idempotency_key="u",
            legs=[Leg(alice["deposit"].pk, inr("-1")), Leg(999_999_999, inr("1"))],
        )
    with pytest.raises(LedgerError, match="another currency"), transaction.atomic():
        transfer_post(
            kind="transfer",
            reference="r",
            idempotency_key="c",
            legs=[Leg(alice["deposit"].pk, inr("-1")), Leg(alice["chips"].pk, inr("1"))],
        )
    assert Transfer.objects.filter(reference="r").count() == 0


def test_batch_is_all_or_nothing():
    alice, bob = funded_player("alice", "10.00"), funded_player("bob", "0")
    ok = TransferRequest(
        kind="transfer",
        reference="b",
        idempotency_key="b1",
        legs=[Leg(alice["deposit"].pk, inr("-6")), Leg(bob["deposit"].pk, inr("6"))],
    )
    too_much = TransferRequest(
        kind="transfer",
        reference="b",
        idempotency_key="b2",
        legs=[Leg(alice["deposit"].pk, inr("-6")), Leg(bob["deposit"].pk, inr("6"))],
    )
    with pytest.raises(InsufficientFunds), transaction.atomic():
        transfers_post(requests=[ok, too_much])
    assert balance(account=alice["deposit"]) == inr("10.00")
    assert not Transfer.objects.filter(reference="b").exists()


def test_reversal_undoes_once_and_points_at_the_original():
    alice, bob = funded_player("alice", "100.00"), funded_player("bob", "0")
    posted = move(alice["deposit"], bob["winnings"], "40.00", "t")
    original = Transfer.objects.get(pk=posted.transfer_id)
    reversal = transfer_reverse(transfer=original, idempotency_key="rev-1")
    assert Transfer.objects.get(pk=reversal.transfer_id).reverses_id == original.pk
    assert balance(account=alice["deposit"]) == inr("100.00")
    assert balance(account=bob["winnings"]) == inr("0.00")
    with pytest.raises(AlreadyReversed), transaction.atomic():
        transfer_reverse(transfer=original, idempotency_key="rev-2")
    assert ledger_violations() == []


def test_reversal_that_would_overdraw_is_refused():
    alice, bob = funded_player("alice", "100.00"), funded_player("bob", "0")
    original = Transfer.objects.get(
        pk=move(alice["deposit"], bob["winnings"], "40", "t").transfer_id
    )
    move(bob["winnings"], alice["deposit"], "30.00", "spent")
    with pytest.raises(InsufficientFunds), transaction.atomic():
        transfer_reverse(transfer=original, idempotency_key="rev")
    assert balance(account=bob["winnings"]) == inr("10.00")


def test_platform_sinks_are_not_cached_but_sum_their_entries():
    alice = funded_player("alice", "100.00")
    fee = platform_accounts()["fee_revenue"]
    move(alice["deposit"], fee, "2.50", "f1")
    move(alice["deposit"], fee, "1.25", "f2")
    assert Account.objects.get(pk=fee.pk).balance == inr("0")  # never row-locked nor updated
    assert balance(account=fee) == inr("3.75")


def test_balance_as_of_a_past_moment_and_statement_with_running_balance():
    alice, bob = funded_player("alice", "100.00"), funded_player("bob", "0")
    move(alice["deposit"], bob["deposit"], "10.00", "s1")
    now = timezone.now()
    assert balance(account=bob["deposit"], at=now - timedelta(days=1)) == inr("0")
    assert balance(account=bob["deposit"], at=now + timedelta(seconds=1)) == inr("10.00")
    move(bob["deposit"], alice["deposit"], "4.00", "s2")
    report = statement(
        account=bob["deposit"], start=now - timedelta(days=1), end=now + timedelta(days=1)
    )
    assert report.opening == inr("0")
    assert [line.running_balance for line in report.lines] == [inr("10.00"), inr("6.00")]
    assert report.closing == inr("6.00") == balance(account=bob["deposit"])


def test_the_same_amount_written_differently_is_the_same_transfer():
    alice, bob = funded_player("alice", "100.00"), funded_player("bob", "0")
    first = move(alice["deposit"], bob["deposit"], "30", "k")
    again = move(alice["deposit"], bob["deposit"], "30.00", "k")
    assert again == Posted(transfer_id=first.transfer_id, created=False)
    assert balance(account=bob["deposit"]) == inr("30.00")


def test_a_batch_answers_in_request_order_and_replays_only_what_it_already_holds():
    # given three transfers of different amounts, keys out of alphabetical order
    alice, bob = funded_player("alice", "100.00"), funded_player("bob", "0")

    def request(key: str, amount: str) -> TransferRequest:
        legs = [Leg(alice["deposit"].pk, inr(f"-{amount}")), Leg(bob["deposit"].pk, inr(amount))]
        return TransferRequest(kind="transfer", reference="r", idempotency_key=key, legs=legs)

    first = transfers_post(requests=[request("z", "1.00"), request("a", "2.00")])
    # when the same two come again with a new one between them
    again = transfers_post(
        requests=[request("z", "1.00"), request("m", "4.00"), request("a", "2.00")]
    )
    # then each answer is its own request's transfer, the old ones replayed, posted once
    assert [p.created for p in first] == [True, True]
    assert [p.created for p in again] == [False, True, False]
    assert [again[0].transfer_id, again[2].transfer_id] == [p.transfer_id for p in first]
    keys = dict(Transfer.objects.values_list("pk", "idempotency_key"))
    assert [keys[p.transfer_id] for p in again] == ["z", "m", "a"]
    amounts = {
        p.transfer_id: Entry.objects.get(transfer_id=p.transfer_id, account=bob["deposit"]).amount
        for p in again
    }
    assert [amounts[p.transfer_id] for p in again] == [inr("1.00"), inr("4.00"), inr("2.00")]
    assert balance(account=bob["deposit"]) == inr("7.00")
    assert Entry.objects.filter(transfer__reference="r").count() == 6
    assert ledger_violations() == []
