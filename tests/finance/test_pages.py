"""What the finance pages say, through the test client (docs/finance-admin.md): platform balances in
the accounts list, search by the ids staff know, the statement in pages, times in IST, a reversed
game, what a reversal moves. The browser tests show the same to a person."""

import codecs
import csv
import io
from datetime import datetime, time, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from djmoney.money import Money

from tests.builders import funded_player, move, points_game, staff, staff_client
from tournaments.games.queries import game_transfer_ids
from tournaments.games.services.escrow import fee_account_id
from tournaments.models import Deal, FeeDay, Game
from wallets.models import Account, Entry, Player, Reversal, Transfer
from wallets.money.formatting import ist, money
from wallets.reconciliation import reconcile_run
from wallets.services.adjustments import adjustment_propose
from wallets.services.proposals import proposal_decide
from wallets.services.reversals import reversal_propose
from wallets.services.transfers import balance

pytestmark = pytest.mark.django_db


def credit(proposed_by, external_id: str = "a", amount: str = "1.00"):
    """A credit of the player's deposit bucket, proposed."""
    return adjustment_propose(
        proposed_by=proposed_by,
        player=Player.objects.get(external_id=external_id),
        bucket="deposit",
        direction="credit",
        amount=Money(amount, "INR"),
        reason="goodwill",
    )


def propose_reversal(operator, game):
    return reversal_propose(
        proposed_by=operator,
        reference=f"game:{game.pk}",
        transfer_ids=game_transfer_ids(game),
        reason="collusion",
    )


def found(client, name: str, q: str) -> set[int]:
    response = client.get(reverse(f"admin:{name}_changelist"), {"q": q})
    assert response.status_code == 200
    return {obj.pk for obj in response.context["cl"].result_list}


@pytest.fixture
def games(game_server):
    """Two settled games of the same players, the first with the id staff were given."""
    first = points_game(game_server, "sim-597bcd-5")
    second = points_game(game_server, "sim-597bcd-6")
    return first, second


def test_platform_accounts_show_the_sum_of_their_entries_in_one_query(viewer, games):
    client = staff_client(viewer)
    fee = Account.objects.get(code="platform:fee_revenue")
    assert fee.balance.amount == 0  # platform accounts cache nothing: the list must sum

    with CaptureQueriesContext(connection) as queries:
        page = client.get(reverse("admin:wallets_account_changelist"), {"kind__exact": "platform"})

    row = next(r for r in page.context["cl"].result_list if r.pk == fee.pk)
    assert row.shown_balance == balance(account=fee) == Money(sum(g.fee for g in games), "INR")
    assert money(row.shown_balance) in page.content.decode()
    summing = [q["sql"] for q in queries.captured_queries if "wallets_entry" in q["sql"]]
    assert len(summing) == 1 and "GROUP BY" in summing[0]  # one query for every platform row


def test_search_by_the_game_id_staff_know_everywhere(viewer, operator, games):
    first = games[0]
    client = staff_client(viewer)
    transfers = set(game_transfer_ids(first))
    proposal = propose_reversal(operator, first)

    assert found(client, "wallets_transfer", "sim-597bcd-5") == transfers
    entries = found(client, "wallets_entry", "sim-597bcd-5")
    assert {e.transfer_id for e in Entry.objects.filter(pk__in=entries)} == transfers
    assert found(client, "tournaments_game", "sim-597bcd-5") == {first.pk}
    assert found(client, "tournaments_deal", "sim-597bcd-5") == {first.deals.get().pk}
    assert found(client, "wallets_reversal", "sim-597bcd-5") == {proposal.pk}
    assert found(client, "wallets_reversal", f"game:{first.pk}") == {proposal.pk}
    assert found(client, "wallets_transfer", "sim-597bcd-") == set()  # ids match exactly


def test_search_by_the_players_external_id_everywhere(viewer, operator, games):
    client = staff_client(viewer)
    player = Player.objects.get(external_id="b")
    adjustment = credit(operator, "b", "5.00")
    accounts = Account.objects.filter(player=player)

    assert found(client, "wallets_transfer", "b") == set(
        Entry.objects.filter(account__in=accounts).values_list("transfer_id", flat=True)
    )
    assert found(client, "wallets_entry", "b") == set(
        Entry.objects.filter(account__in=accounts).values_list("pk", flat=True)
    )
    assert found(client, "tournaments_game", "b") == {g.pk for g in games}
    assert found(client, "tournaments_deal", "b") == set(Deal.objects.values_list("pk", flat=True))
    assert found(client, "wallets_adjustment", "b") == {adjustment.pk}
    assert found(client, "wallets_account", "b") == set(accounts.values_list("pk", flat=True))
    assert found(client, "wallets_player", "b") == {player.pk}


def test_the_transfers_list_says_what_moved_between_whom_for_which_game(viewer, games):
    page = staff_client(viewer).get(
        reverse("admin:wallets_transfer_changelist"), {"q": "sim-597bcd-5"}
    )

    rows = page.context["cl"].result_list
    entries = [t for t in rows if t.kind == "entry"]
    assert [(t.moved, t.player_ids) for t in sorted(entries, key=lambda t: t.pk)] == [
        ([Money("160.00", "INR")], [p])
        for p in "abcd"  # 80 points x ₹2 into escrow each
    ]
    html = page.content.decode()
    assert "₹160.00" in html and "sim-597bcd-5</a>" in html


def test_the_statement_comes_in_pages_with_running_balances(viewer, monkeypatch, alice):
    monkeypatch.setattr("wallets.admin.accounts.STATEMENT_PAGE", 2)
    bob = funded_player("bob", "0")
    for n in range(3):
        move(alice["deposit"], bob["deposit"], "10.00", f"t{n}")
    url = reverse("admin:wallets_player_statement", args=[alice["deposit"].player_id])
    today = timezone.localdate().isoformat()
    params = {"bucket": "deposit", "start": today, "end": today}

    first = staff_client(viewer).get(url, params)
    second = staff_client(viewer).get(url, {**params, "page": 2})

    balances = [str(line.running_balance.amount) for line in first.context["statement"].lines]
    assert balances == ["500.00", "490.00"]
    assert [str(ln.running_balance.amount) for ln in second.context["statement"].lines] == [
        "480.00",
        "470.00",
    ]
    assert first.context["statement"].closing == Money("470.00", "INR")
    assert "lines 1\N{EN DASH}2 of 4" in first.content.decode()
    assert 'rel="next"' in first.content.decode() and "page=2" in first.content.decode()
    assert "closing balance" not in first.content.decode()
    assert "closing balance" in second.content.decode()
    assert 'rel="next"' not in second.content.decode()
    csv_rows = (
        staff_client(viewer)
        .get(url, {**params, "format": "csv"})
        .content.decode("utf-8-sig")
        .splitlines()
    )
    assert len(csv_rows) == 1 + 1 + 4 + 1  # the CSV is never paged
    assert csv_rows[0].split(",")[5:7] == ["amount (₹)", "balance (₹)"]


@pytest.mark.parametrize(
    "reference",
    ['=HYPERLINK("http://evil.example","open")', "+1+cmd", "@SUM(1+1)*cmd|' /C calc'!A0", "-2+3"],
)
def test_a_statement_csv_runs_no_formula_a_reference_carries(viewer, alice, reference):
    bob = funded_player("bob", "0")
    move(alice["deposit"], bob["deposit"], "10.00", reference)
    url = reverse("admin:wallets_player_statement", args=[alice["deposit"].player_id])
    today = timezone.localdate().isoformat()
    params = {"bucket": "deposit", "start": today, "end": today, "format": "csv"}

    response = staff_client(viewer).get(url, params)

    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response.content.startswith(codecs.BOM_UTF8)
    rows = list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))
    moved = [row for row in rows if row[2] == "transfer"]
    assert [row[3] for row in moved] == ["'" + reference]  # shown as text, never run
    assert [row[5] for row in moved] == ["-10.00"]  # a plain number stays a number


@pytest.mark.parametrize("page", ["99999999999999999999", "1000000001", "0", "-1", "x"])
def test_a_statement_page_that_can_be_no_page_shows_the_first(viewer, alice, page):
    url = reverse("admin:wallets_player_statement", args=[alice["deposit"].player_id])
    today = timezone.localdate().isoformat()
    asked = {"bucket": "deposit", "start": today, "end": today, "page": page}

    shown = staff_client(viewer).get(url, asked)

    assert shown.status_code == 200
    assert [str(ln.running_balance.amount) for ln in shown.context["statement"].lines] == ["500.00"]


def test_the_admins_own_times_are_ist_to_the_second(viewer, alice):
    player = alice["deposit"].player

    page = staff_client(viewer).get(reverse("admin:wallets_player_change", args=[player.pk]))

    assert ist(player.created_at) in page.content.decode()
    assert ist(player.created_at).endswith(" IST")
    assert timezone.localtime(player.created_at).strftime("%H:%M:%S") in ist(player.created_at)


def test_an_approved_reversal_makes_the_game_reversed_and_the_books_stay_clean(
    operator, approver, games
):
    first, second = games
    proposal = propose_reversal(operator, first)
    assert Game.objects.get(pk=first.pk).status == "finished"  # proposed: nothing yet

    proposal_decide(model=Reversal, proposal_id=proposal.pk, approve=True, decided_by=approver)

    assert Game.objects.get(pk=first.pk).status == Game.Status.REVERSED
    assert Game.objects.get(pk=second.pk).status == Game.Status.FINISHED
    assert reconcile_run(trigger="command").status == "clean"


def test_a_rejected_reversal_leaves_the_game_as_it_was(operator, approver, games):
    first, _ = games
    proposal = propose_reversal(operator, first)
    proposal_decide(model=Reversal, proposal_id=proposal.pk, approve=False, decided_by=approver)

    assert Game.objects.get(pk=first.pk).status == "finished"


def test_the_reversal_page_shows_each_change_and_the_totals(operator, approver, games):
    first, _ = games
    proposal = propose_reversal(operator, first)

    html = staff_client(approver).get(reverse("admin:wallets_reversal_change", args=[proposal.pk]))
    html = html.content.decode()

    assert "player:a:winnings" in html and f"-{money(first.players.get(seat=1).payout)}" in html
    assert f"-{money(first.fee)}" in html  # the fee goes back out of fee_revenue
    assert "net (every transfer balances)" in html and "₹0.00" in html
    propose_page = staff_client(operator).get(
        reverse("admin:tournaments_game_propose_reversal", args=[games[1].pk])
    )
    assert "What approving moves" in propose_page.content.decode()


def test_who_may_not_use_a_button_does_not_see_it(viewer, operator, approver, games):
    first, _ = games
    game_page = reverse("admin:tournaments_game_change", args=[first.pk])
    assert "Propose a reversal" not in staff_client(viewer).get(game_page).content.decode()
    assert "Propose a reversal" not in staff_client(approver).get(game_page).content.decode()
    assert "Propose a reversal" in staff_client(operator).get(game_page).content.decode()
    own = credit(operator)
    both = staff("both", "finance operator", "finance approver")
    page = reverse("admin:wallets_adjustment_change", args=[own.pk])
    assert 'id="decision"' in staff_client(approver).get(page).content.decode()
    mine = credit(both)
    shown = staff_client(both).get(reverse("admin:wallets_adjustment_change", args=[mine.pk]))
    assert 'id="decision"' not in shown.content.decode()
    assert "You proposed this" in shown.content.decode()


def test_a_refused_page_is_the_admins_own_with_the_reason(viewer, games):
    response = staff_client(viewer).get(
        reverse("admin:tournaments_game_propose_reversal", args=[games[0].pk])
    )

    assert response.status_code == 403
    html = response.content.decode()
    assert 'id="header"' in html and "rummy-ledger finance" in html and "Not allowed" in html


def test_the_adjustment_says_whose_it_is_and_the_decision_note_is_kept(operator, approver, alice):
    adj = credit(operator, "alice", "1234.50")
    assert str(adj) == f"adjustment #{adj.pk}: credit ₹1,234.50 to alice (deposit)"

    staff_client(approver).post(
        reverse("admin:wallets_adjustment_decide", args=[adj.pk]),
        {"decision": "reject", "note": "no ticket"},
    )

    adj.refresh_from_db()
    assert (adj.status, adj.decision_note) == ("rejected", "no ticket")
    page = staff_client(operator).get(reverse("admin:wallets_adjustment_change", args=[adj.pk]))
    assert "no ticket" in page.content.decode() and "₹1,234.50" in page.content.decode()
    assert not Transfer.objects.filter(kind="adjustment").exists()


def test_the_fee_report_reads_only_the_days_still_open_once_it_has_read_the_rest(
    games, monkeypatch
):
    from tournaments.games import queries
    from tournaments.games.services import fee_report

    monkeypatch.setattr(fee_report, "DAY_CLOSED_AFTER", timedelta(0))
    read = []
    real = queries.fee_report_rows
    monkeypatch.setattr(queries, "fee_report_rows", lambda **kw: read.append(kw) or real(**kw))
    fee = Account.objects.get(pk=fee_account_id())
    today = timezone.localdate()
    week = {"fee_account": fee, "first": today - timedelta(days=6), "last": today}

    first, again = fee_report.fee_report_days(**week), fee_report.fee_report_days(**week)

    assert first == again == [
        {"day": today, "format": "points", "currency": "INR", "fee": sum(g.fee for g in games),
         "games": 2}
    ]  # fmt: skip
    assert [timezone.localtime(r["start"]).date() for r in read] == [week["first"], today]
    stored = FeeDay.objects.filter(fee_account=fee).values_list("day", flat=True)
    assert sorted(stored) == [week["first"] + timedelta(days=n) for n in range(6)]  # not today


def test_the_nightly_close_stores_each_closed_day_once_and_the_report_then_skips_the_ledger(
    viewer, games
):
    from tournaments.games.services.fee_report import fee_days_close

    fee = Account.objects.get(pk=fee_account_id())
    today = timezone.localdate()
    url = reverse("admin:tournaments_game_fee_report")
    span = {"start": (today - timedelta(days=29)).isoformat(), "end": today.isoformat()}
    before = staff_client(viewer).get(url, span).content.decode()
    assert fee_days_close(fee_account=fee) == 0  # today is still open: nothing to store
    # 02:00 the next night (local time): today has closed, and no day after it yet, whatever
    # the hour the test runs at (now + 26 h, run after 22:00 local, closed tomorrow too)
    tomorrow_night = timezone.make_aware(datetime.combine(today + timedelta(days=1), time(2)))

    # the page stored the days closed already: up to yesterday, or the day before it in the
    # hour after midnight (a day closes DAY_CLOSED_AFTER after it ends)
    kept = FeeDay.objects.filter(fee_account=fee).order_by("-day").first()
    due = (today - kept.day).days

    stored = fee_days_close(fee_account=fee, now=tomorrow_night)
    again = fee_days_close(fee_account=fee, now=tomorrow_night)

    assert due in (1, 2) and (stored, again) == (due, 0)  # through today; once
    day = FeeDay.objects.get(fee_account=fee, day=today)
    total = sum(g.fee for g in games)
    assert (day.day, day.rows) == (
        today, [{"format": "points", "currency": "INR", "fee": str(total), "games": 2}]
    )  # fmt: skip
    with CaptureQueriesContext(connection) as seen:
        after = staff_client(viewer).get(url, span).content.decode()
    assert not [q["sql"] for q in seen.captured_queries if "wallets_entry" in q["sql"]]
    assert money(Money(total, "INR")) in after and money(Money(total, "INR")) in before


def test_the_nightly_close_runs_from_beat_after_yesterday_has_closed(settings):
    from tournaments.games.services.fee_report import DAY_CLOSED_AFTER

    job = settings.CELERY_BEAT_SCHEDULE["tournaments-fee-days-close"]
    assert job["task"] == "tournaments.tasks.fee_days_close"
    assert job["schedule"].hour == {1} and job["schedule"].minute == {15}
    assert timedelta(hours=1, minutes=15) > DAY_CLOSED_AFTER


def test_the_fee_report_links_the_gst_and_tds_reports_it_does_not_repeat(viewer, games):
    html = staff_client(viewer).get(reverse("admin:tournaments_game_fee_report")).content.decode()

    assert reverse("admin:wallets_gst_report") in html
    assert reverse("admin:wallets_tds_report") in html
    assert "once the tax reports are in place" not in html


def test_the_reconciliation_list_reloads_itself_until_the_run_asked_for_has_its_report(
    operator, monkeypatch
):
    from wallets.models import ReconciliationReport

    monkeypatch.setattr("wallets.tasks.reconcile_nightly.delay", lambda *args: None)  # no worker
    client = staff_client(operator)
    url = reverse("admin:wallets_reconciliationreport_changelist")
    assert 'http-equiv="refresh"' not in client.get(url).content.decode()

    client.post(reverse("admin:wallets_reconciliationreport_run"))
    assert 'http-equiv="refresh"' in client.get(url).content.decode()  # not started yet
    report = ReconciliationReport.objects.create(trigger="admin", started_by=operator)
    assert 'http-equiv="refresh"' in client.get(url).content.decode()  # running

    ReconciliationReport.objects.filter(pk=report.pk).update(status="clean")

    assert 'http-equiv="refresh"' not in client.get(url).content.decode()
