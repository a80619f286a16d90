"""The ledger's hash chain (wallets/chain/) over real PostgreSQL transactions: a clean ledger
verifies clean; an entry's amount changed, an entry deleted and a deal's hands changed, each by a
superuser session skipping the triggers, are each found and named by `verify_ledger` (and only
those); the job follows commit order when transactions commit out of id order; the daily digests;
the nightly reconciliation's incremental check."""

from __future__ import annotations

import io
import json
import random
import threading
import time
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from tests.builders import chain_caught_up, funded_player, make_api, move, points_game
from tests.concurrency import run_in_threads
from tests.tournaments.worker import wait_until
from tournaments.models import Deal, DealTransfer
from wallets.chain.links import chain_extend, digests_record
from wallets.chain.verify import chain_verify
from wallets.models import ChainDigest, ChainLink, Entry, ReconciliationReport, Transfer
from wallets.reconciliation import chain as chain_check
from wallets.reconciliation import reconcile_run

pytestmark = pytest.mark.django_db(transaction=True)


def verify_ledger(*args: str) -> tuple[int, str, str]:
    """`manage.py verify_ledger`: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("verify_ledger", *args, stdout=out, stderr=err)
        status = 0
    except SystemExit as exc:
        status = exc.code
    return status, out.getvalue(), err.getvalue()


def as_superuser_skipping_triggers(sql: str, params: list) -> None:
    """What a DBA (or an edited backup) can do: a superuser session with the triggers off."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute(sql, params)
        assert cursor.rowcount == 1


@pytest.fixture
def ledger(eager):
    """Deposits, moves between players and a settled points game, all chained."""
    a, b = funded_player("pa", "300.00"), funded_player("pb", "300.00")
    posted = [move(a["deposit"], b["deposit"], f"{n}.25", key=f"m{n}") for n in (1, 2, 3)]
    moves = [Transfer.objects.get(pk=p.transfer_id) for p in posted]
    game = points_game(make_api("games", name="server")[1], "g1")
    chain_caught_up()
    return moves, game


def test_a_clean_ledger_verifies_clean(ledger):
    status, out, err = verify_ledger()
    assert (status, err) == (0, "")
    assert "the chain verifies clean" in out
    links = ChainLink.objects.count()
    assert links == Transfer.objects.count() > 5
    assert f"({links} links" in out
    # the settlement's transfers are chained with their deal
    settled = DealTransfer.objects.values_list("transfer_id", flat=True)
    assert settled and set(settled) <= set(ChainLink.objects.values_list("transfer_id", flat=True))


def _differing(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("link ")]


def test_an_entry_amount_changed_is_found_and_named(ledger):
    moves, _ = ledger
    target = moves[1]
    entry = Entry.objects.filter(transfer=target).order_by("id").first()
    as_superuser_skipping_triggers(
        f"UPDATE {Entry._meta.db_table} SET amount = amount + 100 WHERE id = %s", [entry.pk]
    )
    status, _, err = verify_ledger()
    assert status == 1
    seq = ChainLink.objects.get(transfer=target).seq
    assert _differing(err) == [
        f"link {seq}: transfer {target.pk} (transfer m2) differs from what was chained"
    ]
    assert f"FIRST DIFFERENCE: link {seq}: transfer {target.pk}" in err


def test_an_entry_deleted_is_found_and_named(ledger):
    moves, _ = ledger
    target = moves[0]
    entry = Entry.objects.filter(transfer=target).order_by("id").last()
    as_superuser_skipping_triggers(f"DELETE FROM {Entry._meta.db_table} WHERE id = %s", [entry.pk])
    status, _, err = verify_ledger()
    assert status == 1
    seq = ChainLink.objects.get(transfer=target).seq
    assert _differing(err) == [
        f"link {seq}: transfer {target.pk} (transfer m1) differs from what was chained"
    ]


def test_a_deals_hands_changed_are_found_and_the_deal_named(ledger):
    _, game = ledger
    deal = Deal.objects.get(game=game)
    hands = deal.results
    hands[0], hands[-1] = (
        {**hands[0], "player": hands[-1]["player"]},
        {
            **hands[-1],
            "player": hands[0]["player"],
        },
    )  # the winner's cards given to the loser
    as_superuser_skipping_triggers(
        f"UPDATE {Deal._meta.db_table} SET results = %s::jsonb WHERE id = %s",
        [json.dumps(hands), deal.pk],
    )
    status, _, err = verify_ledger()
    assert status == 1
    caused = Transfer.objects.filter(
        pk__in=DealTransfer.objects.filter(deal=deal).values("transfer_id")
    )
    assert {t.kind for t in caused} == {"settlement", "refund"}
    expected = [
        f"link {ChainLink.objects.get(transfer=t).seq}: transfer {t.pk} ({t.kind} game:{game.pk})"
        f" differs from what was chained, caused by deal {deal.pk} (game g1, deal 1)"
        for t in caused
    ]
    assert sorted(_differing(err)) == sorted(expected)  # those transfers, and only those


def test_a_transfer_deleted_is_named_and_so_is_a_link_changed(ledger):
    moves, _ = ledger
    target = moves[2]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute(f"DELETE FROM {Entry._meta.db_table} WHERE transfer_id = %s", [target.pk])
        cursor.execute(f"DELETE FROM {Transfer._meta.db_table} WHERE id = %s", [target.pk])
    status, _, err = verify_ledger()
    seq = ChainLink.objects.get(transfer_id=target.pk).seq
    assert status == 1
    assert _differing(err) == [f"link {seq}: transfer {target.pk} is gone"]


def test_links_and_digests_are_append_only(ledger):
    digests_record(today=timezone.localdate() + timedelta(days=1))
    changes = [
        f"UPDATE {ChainLink._meta.db_table} SET hash = md5(hash) || md5(hash)",
        f"DELETE FROM {ChainLink._meta.db_table}",
        f"UPDATE {ChainDigest._meta.db_table} SET head = md5(head) || md5(head)",
        f"DELETE FROM {ChainDigest._meta.db_table}",
    ]
    for sql in changes:
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
            connection.cursor().execute(sql)


def test_a_digest_per_day_names_the_chains_head_and_is_checked(ledger):
    today = timezone.localdate()
    assert digests_record(today=today + timedelta(days=2)) == 2  # today and tomorrow
    assert digests_record(today=today + timedelta(days=2)) == 0  # once each
    last = ChainLink.objects.order_by("-seq").first()
    digest, empty = ChainDigest.objects.order_by("day")
    assert (digest.day, digest.through_seq, digest.head, digest.links) == (
        today, last.seq, last.hash, last.seq
    )  # fmt: skip
    assert (empty.through_seq, empty.head, empty.links) == (last.seq, last.hash, 0)
    result = chain_verify()
    assert (result.clean, result.digests, result.checked) == (True, 2, last.seq)
    # --since the day after today: from the digest of today on, nothing to recompute
    status, out, _ = verify_ledger("--since", str(today + timedelta(days=1)))
    assert status == 0 and f"verified links {last.seq + 1}-{last.seq} (0 links" in out
    with pytest.raises(CommandError, match="YYYY-MM-DD"):
        verify_ledger("--since", "yesterday")


def test_the_job_follows_commit_order_not_id_order(db):
    a, b, c, d = (funded_player(f"p{n}", "100.00") for n in "abcd")
    chain_caught_up()
    first_in, later_committed, read = threading.Event(), threading.Event(), threading.Event()
    read_while_open = []

    def early():  # takes the smaller id (and txid), commits last
        with transaction.atomic():
            move(a["deposit"], b["deposit"], "1.00", key="early")
            first_in.set()
            read.wait(30)

    def late():  # takes the larger id, commits first
        first_in.wait(30)
        move(c["deposit"], d["deposit"], "2.00", key="late")  # other accounts: no lock wait
        later_committed.set()

    def job():  # runs while "late" is committed and "early" still open
        later_committed.wait(30)
        read_while_open.append(chain_extend(wait=True))
        read.set()

    assert run_in_threads(lambda n: (early, late, job)[n](), 3) == [None, None, None]
    assert read_while_open == [0]  # "late" committed, but "early" was still open: nothing passed
    chain_caught_up()
    early_t, late_t = (Transfer.objects.get(reference=r) for r in ("early", "late"))
    assert early_t.pk < late_t.pk
    seqs = [ChainLink.objects.get(transfer=t).seq for t in (early_t, late_t)]
    assert seqs[1] == seqs[0] + 1  # both chained, once each, the earlier transaction first
    assert chain_verify().clean


def test_concurrent_postings_are_each_chained_once_while_the_job_runs(db):
    players = [funded_player(f"p{n}", "500.00") for n in range(4)]
    stop = threading.Event()

    def post(n: int) -> None:
        if n == 4:  # the job, over and over while the others post
            while not stop.is_set():
                chain_extend()
            return
        for i in range(15):
            source, target = players[n]["deposit"], players[(n + 1) % 4]["deposit"]
            with transaction.atomic():
                move(source, target, "1.00", key=f"c{n}-{i}")
                time.sleep(random.random() * 0.01)  # commits interleave out of id order
        if n == 0:
            time.sleep(0.5)
            stop.set()

    assert run_in_threads(post, 5) == [None] * 5
    chain_caught_up()
    chained = list(ChainLink.objects.order_by("seq").values_list("seq", "transfer_id"))
    assert [seq for seq, _ in chained] == list(range(1, len(chained) + 1))
    assert len({t for _, t in chained}) == len(chained) == Transfer.objects.count()
    assert chain_verify().clean


def test_reconciliation_reports_a_difference_and_goes_on_from_the_last_clean_run(ledger):
    moves, _ = ledger
    clean = reconcile_run(trigger=ReconciliationReport.Trigger.COMMAND)
    through = ChainLink.objects.order_by("-seq").first().seq
    assert clean.stats["chain"] == {
        "after": 0, "checked": through, "differences": 0, "verified_through": through
    }  # fmt: skip
    move(Entry.objects.filter(transfer=moves[0]).first().account, moves[0].entries.last().account,
         "0.50", key="after-clean")  # fmt: skip
    chain_caught_up()
    target = Transfer.objects.get(reference="after-clean")
    entry = Entry.objects.filter(transfer=target).first()
    as_superuser_skipping_triggers(
        f"UPDATE {Entry._meta.db_table} SET amount = amount * 2 WHERE id = %s", [entry.pk]
    )
    report = reconcile_run(trigger=ReconciliationReport.Trigger.COMMAND)
    assert report.stats["chain"]["after"] == through  # incremental: from the last clean run
    found = list(report.discrepancies.filter(kind="chain_difference"))
    assert [(d.details["transfer"], d.details["link"]) for d in found] == [(target.pk, through + 1)]
    # the next run looks again from the same link
    again = reconcile_run(trigger=ReconciliationReport.Trigger.COMMAND)
    assert again.stats["chain"]["after"] == through
    assert again.discrepancies.filter(kind="chain_difference").count() == 1


def test_reconciliation_reports_transfers_the_job_left_unchained(db, settings, monkeypatch):
    funded_player("pa", "100.00")  # transfers the job never ran for
    funded_player("pb", "100.00")
    settings.CHAIN_BEHIND_MINUTES = 0

    def committed_all() -> bool:  # no older transaction of another test process holds them back
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT max(txid::text::bigint) < pg_snapshot_xmin(pg_current_snapshot())"
                "::text::bigint FROM wallets_transfer"
            )
            return cursor.fetchone()[0]

    assert wait_until(committed_all, 30)
    report = reconcile_run(trigger=ReconciliationReport.Trigger.COMMAND)
    (behind,) = report.discrepancies.filter(kind="chain_behind")
    first = Transfer.objects.order_by("txid", "id").first()
    assert behind.details == {
        "transfers": Transfer.objects.count(),
        "more": False,
        "first": first.pk,
    }
    monkeypatch.setattr(chain_check, "BEHIND_COUNTED", Transfer.objects.count() - 1)
    capped = reconcile_run(trigger=ReconciliationReport.Trigger.COMMAND)
    (behind,) = capped.discrepancies.filter(kind="chain_behind")
    assert behind.details == {
        "transfers": chain_check.BEHIND_COUNTED,
        "more": True,
        "first": first.pk,
    }
    assert behind.subject.startswith(f"{chain_check.BEHIND_COUNTED} or more transfers not chained")
    chain_caught_up()
    again = reconcile_run(trigger=ReconciliationReport.Trigger.COMMAND)
    assert not again.discrepancies.filter(kind="chain_behind").exists()


def test_a_deal_deleted_is_named(ledger):
    _, game = ledger
    deal = Deal.objects.get(game=game)
    as_superuser_skipping_triggers(f"DELETE FROM {Deal._meta.db_table} WHERE id = %s", [deal.pk])
    status, _, err = verify_ledger()
    assert status == 1
    caused = DealTransfer.objects.filter(deal_id=deal.pk).count()
    named = [line for line in _differing(err) if line.endswith(f"caused by deal {deal.pk} (gone)")]
    assert len(named) == len(_differing(err)) == caused
