"""PostgreSQL itself refuses what must never happen, whatever the Python code does."""

import time
from datetime import timedelta

import pytest
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.utils import timezone
from djmoney.money import Money

from tests.builders import funded_player, move
from wallets.models import CASH, Entry, Transfer
from wallets.services.transfers import balance

pytestmark = pytest.mark.django_db(transaction=True)


def raw(sql: str, params=()):
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall() if cursor.description else None


def insert_transfer(key: str) -> int:
    return raw(
        "INSERT INTO wallets_transfer (kind, reference, idempotency_key, content_hash, memo, "
        "created_at) VALUES ('transfer', 'raw', %s, '', '', now()) RETURNING id",
        [key],
    )[0][0]


def test_unbalanced_transfer_by_raw_sql_is_refused_at_commit():
    alice = funded_player("alice", "100.00")
    entries_before = Entry.objects.count()
    with pytest.raises(DatabaseError, match="does not balance"), transaction.atomic():
        transfer_id = insert_transfer("raw-1")
        raw(
            "INSERT INTO wallets_entry (transfer_id, account_id, amount, amount_currency, "
            "created_at) VALUES (%s, %s, 5.00, 'INR', now())",
            [transfer_id, alice["deposit"].pk],
        )
        # the statement itself succeeded: only the commit refuses it (deferred trigger)
    assert Entry.objects.count() == entries_before
    assert not Transfer.objects.filter(idempotency_key="raw-1").exists()


def test_entry_in_the_wrong_currency_is_refused_at_commit():
    alice = funded_player("alice", "100.00")
    with pytest.raises(DatabaseError, match="does not balance"), transaction.atomic():
        transfer_id = insert_transfer("raw-2")
        raw(
            "INSERT INTO wallets_entry (transfer_id, account_id, amount, amount_currency, "
            "created_at) VALUES (%s, %s, 5.00, 'CHP', now()), (%s, %s, -5.00, 'CHP', now())",
            [transfer_id, alice["deposit"].pk, transfer_id, alice["winnings"].pk],
        )


def test_negative_player_balance_by_raw_sql_is_refused():
    alice = funded_player("alice", "100.00")
    with pytest.raises(IntegrityError, match="account_balance_not_negative"), transaction.atomic():
        raw("UPDATE wallets_account SET balance = -0.01 WHERE id = %s", [alice["deposit"].pk])
    assert balance(account=alice["deposit"]) == Money("100.00", CASH)


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE wallets_entry SET amount = amount * 2",
        "DELETE FROM wallets_entry",
        "UPDATE wallets_transfer SET reference = 'x'",
        "DELETE FROM wallets_transfer",
    ],
)
def test_entries_and_transfers_are_append_only(sql):
    funded_player("alice", "100.00")
    with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
        raw(sql)
    assert Entry.objects.count() == 3  # the deposit: clearing, deposit bucket, GST


def test_duplicate_idempotency_key_by_raw_sql_is_refused():
    insert_transfer("dup")
    with pytest.raises(IntegrityError), transaction.atomic():
        insert_transfer("dup")


def test_balance_as_of_past_moments():
    alice, bob = funded_player("alice", "100.00"), funded_player("bob", "0")
    moments = []
    for n, amount in enumerate(["10.00", "15.00", "20.00"]):
        moments.append(timezone.now())
        time.sleep(0.01)
        move(alice["deposit"], bob["deposit"], amount, f"hist-{n}")
    moments.append(timezone.now() + timedelta(seconds=1))
    seen = [balance(account=bob["deposit"], at=moment).amount for moment in moments]
    assert [str(x) for x in seen] == ["0.00", "10.00", "25.00", "45.00"]
