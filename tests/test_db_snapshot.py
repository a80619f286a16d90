import pytest
from djmoney.money import Money

from rummy_ledger.db import snapshot
from tests.builders import funded_player, move
from tests.concurrency import run_in_threads
from wallets.models import CASH, Account

pytestmark = pytest.mark.django_db(transaction=True)


def test_reads_in_a_snapshot_agree_even_if_another_connection_commits_between_them():
    alice, bob = funded_player("alice", "100.00"), funded_player("bob", "0")

    def pay_bob(_n: int):
        return move(alice["deposit"], bob["deposit"], "40", "between")

    with snapshot():
        first = Account.objects.get(pk=alice["deposit"].pk).balance
        assert not isinstance(run_in_threads(pay_bob, 1)[0], Exception)  # committed elsewhere
        second = Account.objects.get(pk=bob["deposit"].pk).balance

    assert (first, second) == (Money("100.00", CASH), Money("0.00", CASH))
    assert Account.objects.get(pk=bob["deposit"].pk).balance == Money("40.00", CASH)
