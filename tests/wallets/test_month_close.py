"""Closing an IST month by maker-checker: the close stores every account's balance proven from
the month's entries, the database then refuses any entry dated in that month, and re-proving
the close finds what was changed behind its back."""

from decimal import Decimal

import psycopg
import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from tests.builders import funded_player, move, staff, tamper
from tests.wallets.invariants import ledger_violations
from tests.wallets.payments import backdate
from wallets.errors import ProposalInvalid, SelfApproval
from wallets.models import Account, Entry, MonthClose, MonthCloseBalance, ProposalStatus, Transfer
from wallets.months import Month
from wallets.reconciliation import reconcile_run
from wallets.reconciliation.months import CLOSE_KINDS, month_close
from wallets.reconciliation.runner import Check
from wallets.roles import APPROVER, OPERATOR
from wallets.services.months import month_close_propose, transactions_started_before
from wallets.services.proposals import proposal_decide

pytestmark = pytest.mark.django_db

LAST = Month.of(timezone.now()).previous()


def last_month_ledger():
    """Two players whose every entry is dated in the middle of last month."""
    alice = funded_player("alice", "100.00")
    bob = funded_player("bob", "0")
    move(alice["deposit"], bob["deposit"], "40.25", "pay-1")  # paise: nothing may truncate them
    backdate(
        LAST.start + (LAST.end - LAST.start) / 2,
        transfers=Transfer.objects.values_list("pk", flat=True),
    )
    return alice, bob


def close(month: Month = LAST) -> MonthClose:
    operator, approver = staff("op", OPERATOR), staff("ap", APPROVER)
    proposed = month_close_propose(proposed_by=operator, month=month.name, reason="month end")
    return proposal_decide(
        model=MonthClose, proposal_id=proposed.pk, decided_by=approver, approve=True
    )


def reprove(month: Month = LAST):
    check = Check(f"month close {month}", month_close(month), CLOSE_KINDS)
    return reconcile_run(trigger="command", checks=[check])


def found(report) -> list[str]:
    return sorted(report.discrepancies.values_list("kind", flat=True))


def test_a_close_stores_every_accounts_balance_and_a_digest():
    alice, bob = last_month_ledger()
    taken = close()
    assert taken.status == ProposalStatus.APPROVED and len(taken.digest) == 64
    assert taken.entries > 0 and taken.previous is None
    stored = {b.account_id: b.balance for b in MonthCloseBalance.objects.filter(close=taken)}
    for account in Account.objects.exclude(kind=Account.Kind.PLATFORM).filter(pk__in=stored):
        assert stored[account.pk] == account.balance.amount
    assert stored[alice["deposit"].pk] == Decimal("59.75")
    assert stored[bob["deposit"].pk] == Decimal("40.25")
    assert sum(stored.values()) == 0  # every currency nets to zero
    assert found(reprove()) == []


def test_the_database_refuses_an_entry_dated_in_a_closed_month():
    alice, bob = last_month_ledger()
    close()
    with (
        pytest.raises(DatabaseError, match="is closed"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            "INSERT INTO wallets_entry (transfer_id, account_id, amount, amount_currency, "
            "created_at) SELECT transfer_id, account_id, amount, amount_currency, created_at "
            "FROM wallets_entry WHERE account_id = %s",
            [alice["deposit"].pk],
        )
    # this month's postings go on
    move(bob["deposit"], alice["deposit"], "1.00", "pay-2")
    assert ledger_violations() == []


def test_reproving_finds_a_changed_balance_and_a_changed_entry():
    alice, _ = last_month_ledger()
    taken = close()
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE wallets_monthclosebalance SET balance = balance + 1 "
            "WHERE close_id = %s AND account_id = %s",
            [taken.pk, alice["deposit"].pk],
        )
    assert found(reprove()) == ["month_close_balance"]
    with connection.cursor() as cursor:
        cursor.execute("SET session_replication_role = replica")
        cursor.execute(
            "UPDATE wallets_entry SET amount = amount + 5 WHERE account_id = %s",
            [alice["deposit"].pk],
        )
        cursor.execute("RESET session_replication_role")
    assert found(reprove()) == ["month_close_balance", "month_close_digest"]


def test_the_command_reproves_a_month_and_says_when_it_is_not_closed(capsys):
    last_month_ledger()
    with pytest.raises(SystemExit):
        call_command("reconcile", "--month", LAST.name, "--no-progress")
    assert "month_not_closed: 1" in capsys.readouterr().out
    close()
    call_command("reconcile", "--month", LAST.name, "--no-progress")
    assert "clean" in capsys.readouterr().out


def test_a_close_is_refused_before_the_month_ends_out_of_order_and_by_its_proposer():
    last_month_ledger()
    operator = staff("op", OPERATOR, APPROVER)  # both roles: still not their own proposal
    this = Month.of(timezone.now())
    with pytest.raises(ProposalInvalid, match="not ended"):
        month_close_propose(proposed_by=operator, month=this.name, reason="early")
    with pytest.raises(ProposalInvalid, match="YYYY-MM"):
        month_close_propose(proposed_by=operator, month="2026-13", reason="x")
    proposed = month_close_propose(proposed_by=operator, month=LAST.name, reason="month end")
    with pytest.raises(SelfApproval):
        proposal_decide(
            model=MonthClose, proposal_id=proposed.pk, decided_by=operator, approve=True
        )
    assert not MonthCloseBalance.objects.exists()


def test_a_transaction_still_running_from_before_the_end_holds_the_close_back(
    django_db_blocker,
):
    # given: another connection with a transaction open
    params = connection.get_connection_params()
    with psycopg.connect(**{k: v for k, v in params.items() if k != "cursor_factory"}) as other:
        other.execute("SELECT 1")  # the transaction starts now
        with connection.cursor() as cursor:
            # then: a month ending after it started waits for it; one ending before does not
            assert transactions_started_before(cursor, timezone.now()) >= 1
            assert transactions_started_before(cursor, LAST.end) == 0


def test_months_close_in_order_each_from_the_previous_close():
    # given: entries last month and the month before
    alice, bob = last_month_ledger()
    earlier = LAST.previous()
    backdate(
        earlier.start, transfers=[move(alice["deposit"], bob["deposit"], "5.00", "p0").transfer_id]
    )
    operator = staff("op0", OPERATOR)
    with pytest.raises(ProposalInvalid, match="entries before"):
        month_close_propose(proposed_by=operator, month=LAST.name, reason="skipping one")
    # when: the earlier month closes, then last month
    first = close(earlier)
    second = proposal_decide(
        model=MonthClose,
        proposal_id=month_close_propose(proposed_by=operator, month=LAST.name, reason="next").pk,
        decided_by=staff("ap0", APPROVER),
        approve=True,
    )
    # then: the second is proved from the first, and both prove again
    assert second.previous == first and second.digest != first.digest
    closing = MonthCloseBalance.objects.get(close=second, account=alice["deposit"]).balance
    assert closing == Account.objects.get(pk=alice["deposit"].pk).balance.amount
    assert found(reprove(earlier)) == [] and found(reprove(LAST)) == []
    with pytest.raises(ProposalInvalid, match="closed already"):
        month_close_propose(proposed_by=operator, month=LAST.name, reason="again")


def test_nightly_reconciliation_after_a_close_reads_only_the_entries_since():
    alice, bob = last_month_ledger()
    close()
    # given: this month, a transfer and a deposit (GST payable moves on from its closing balance)
    move(bob["deposit"], alice["deposit"], "1.00", "pay-2")
    funded_player("carol", "50.00")
    # when
    report = reconcile_run(trigger="manual")
    # then: clean, from the close, over this month's entries only
    assert found(report) == []
    assert report.stats["since_close"] == LAST.name
    assert report.stats["entries"] == 2 + 3  # the transfer's two legs, the deposit's three
    # and a cached balance changed behind the ledger's back is found
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE wallets_account SET balance = balance + 1 WHERE id = %s", [bob["deposit"].pk]
        )
    assert found(reconcile_run(trigger="manual")) == ["cached_balance", "currency_total"]


def test_after_a_close_an_entry_moved_to_another_currency_is_found_on_its_account():
    # given: bob had a closing balance; this month's transfer to him is moved to chips behind
    # the ledger's back
    alice, bob = last_month_ledger()
    close()
    posted = move(alice["deposit"], bob["deposit"], "1.00", "pay-2")
    entry = Entry.objects.get(transfer_id=posted.transfer_id, account=bob["deposit"])
    tamper("UPDATE wallets_entry SET amount_currency = 'CHP' WHERE id = %s", [entry.pk])
    # when
    report = reconcile_run(trigger="manual")
    # then: the entry is named on bob's account, whose cached balance its entries no longer make
    assert {"foreign_currency", "cached_balance"} <= set(found(report))
    assert report.discrepancies.get(kind="foreign_currency").subject == "player:bob:deposit"
    assert report.discrepancies.get(kind="cached_balance").subject == "player:bob:deposit"
