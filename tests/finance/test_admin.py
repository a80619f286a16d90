"""Admin pages for finance staff: every page renders for every role, each role can do exactly
what it should, nobody edits the ledger."""

from datetime import timedelta
from decimal import Decimal
from unittest import mock

import pytest
from django.contrib import admin
from django.core.management import call_command
from django.db import connection
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone
from djmoney.money import Money

from rummy_ledger.api.keys import api_client_create
from tests.builders import bonus_granted, funded_player, points_game, staff, staff_client
from tests.tournaments.leaderboards.builders import board, board_file
from tests.tournaments.tournament_builders import scheduled, tournament_file
from tests.wallets.payments import verified, won
from tournaments.games.queries import game_transfer_ids
from tournaments.games.services.templates import template_change_propose
from tournaments.leaderboards.services.setup import new_leaderboard_propose
from tournaments.tournaments.services.entries import registration_create
from tournaments.tournaments.services.new_tournaments import new_tournament_propose
from tournaments.tournaments.services.terms_changes import tournament_change_propose
from tournaments.tournaments.services.tickets import ticket_issue_propose
from wallets.chain.canonical import GENESIS
from wallets.models import (
    Account,
    Adjustment,
    ChainDigest,
    ClientPairing,
    Entry,
    Player,
    ReconciliationReport,
    Reversal,
    Transfer,
)
from wallets.months import Month
from wallets.reconciliation import reconcile_run
from wallets.reconciliation.gateway import gateway_statement_import
from wallets.services.adjustments import adjustment_propose
from wallets.services.bonuses import bonus_grant_propose
from wallets.services.flows import flow_report_run
from wallets.services.months import month_close_propose
from wallets.services.pair_clearances import pair_clearance_propose
from wallets.services.protection import limits_set, self_exclusion_start
from wallets.services.reversals import reversal_propose
from wallets.services.wind_down import wind_down_propose
from wallets.services.withdrawals import withdrawal_request, withdrawal_review_propose
from wallets.tax.formulas import financial_year_of
from wallets.tax.gst_rates import gst_rate_propose

pytestmark = pytest.mark.django_db

ROLES = ["viewer", "operator", "approver", "superuser"]


@pytest.fixture
def world(operator, game_server, settings):
    """A bit of everything: players, a finished game, proposals, a report, a statement."""
    game = points_game(game_server, "g1")
    adjustment_propose(
        proposed_by=operator,
        player=game.players.first().player,
        bucket="deposit",
        direction="credit",
        amount=Money("10.00", "INR"),
        reason="goodwill",
    )
    reversal_propose(
        proposed_by=operator,
        reference=f"game:{game.pk}",
        transfer_ids=game_transfer_ids(game),
        reason="collusion",
    )
    today = timezone.localdate().isoformat()
    gateway_statement_import(
        name="gw.csv",
        content=f"reference,amount,date,type\ngw-404,10.00,{today},deposit\n".encode(),
    )
    money_world(operator)
    protection_world(operator)
    reconcile_run(trigger="command")
    # the chain's job reads committed transfers only (this test's transaction never commits):
    # a digest as it records one, for its pages
    ChainDigest.objects.create(day=timezone.localdate(), through_seq=0, head=GENESIS, links=0)
    gateway = api_client_create(name="gateway-1", scopes=["payments"])[0]
    ClientPairing.objects.create(games_client=game_server, payments_client=gateway)
    with override_settings(FLOW_REPORT_MIN_GAMES=1, FLOW_REPORT_MIN_AMOUNT=Decimal("0.01")):
        report = flow_report_run(trigger="command")
    pair_clearance_propose(  # the game's losers, flagged; one proposed for clearing
        proposed_by=operator, pair=report.pairs.order_by("pk").first(), reason="reviewed"
    )
    template_change_propose(
        proposed_by=operator,
        template=game.template,
        currency="INR",
        point_value=Decimal("2.00"),
        entry_fee=None,
        fee_percent=Decimal("12.50"),
        reason="new rake",
    )
    settings.REAL_MONEY = "off"
    wind_down_propose(proposed_by=operator, reason="closing the real-money book")
    settings.REAL_MONEY = "on"
    lobby = api_client_create(name="lobby", scopes=["games"])[0]
    tournament = scheduled()
    tournament_change_propose(
        proposed_by=operator,
        tournament=tournament,
        entry_fee=Decimal("200.00"),
        fee_percent=Decimal("12.50"),
        guarantee=Decimal("1000.00"),
        rebuy=None,
        prizes=[{"ranks": "1", "percent": "60.00"}, {"ranks": "2-3", "percent": "20.00"}],
        reason="bigger Sunday",
    )
    new_tournament_propose(
        proposed_by=operator, spec=tournament_file(slug="friday-250"), reason="Friday series"
    )
    funded_player("t1", "500.00")
    ticket_issue_propose(
        proposed_by=operator,
        tournament=tournament,
        players=["t1"],
        expires_at=tournament.registration_closes_at,
        reason="welcome ticket",
    )
    registration_create(client=lobby, slug=tournament.slug, player="t1")
    gst_rate_propose(
        proposed_by=operator,
        effective_from=timezone.localdate() + timedelta(days=30),
        rate_percent=Decimal("45.00"),
        source="GST Council notification",
        reason="rate change notified",
    )
    last_month = Month.of(timezone.now()).previous()
    month_close_propose(proposed_by=operator, month=last_month.name, reason="month end")
    board(client="lobby", tournaments=[tournament.slug])
    new_leaderboard_propose(proposed_by=operator, spec=board_file(slug="week-2"), reason="promo")
    return game


def money_world(operator) -> None:
    """A verified player, a withdrawal waiting with its review, a closed year."""
    verified("a")
    won("a", "1000.00")
    withdrawal, _ = withdrawal_request(
        player_external_id="a", amount=Money("100.00", "INR"), reference="wd-world"
    )
    withdrawal_review_propose(proposed_by=operator, withdrawal_id=withdrawal.pk, reason="checked")
    fy = financial_year_of(timezone.now())
    call_command("tds_year_end", fy.label, as_of=timezone.now().isoformat(), verbosity=0)


def protection_world(operator) -> None:
    """A bonus grant waiting for approval, a bonus lot, limits and a self-exclusion."""
    bonus_granted("a", "20.00")
    bonus_grant_propose(
        proposed_by=operator,
        player=Player.objects.get(external_id="a"),
        amount=Money("15.00", "INR"),
        reason="loyalty",
    )
    limits_set(
        player_external_id="a",
        daily_limit=Decimal("900.00"),
        monthly_limit=None,
        changed_by="gateway",
    )
    self_exclusion_start(player_external_id="a", days=7, changed_by="gateway")


@pytest.fixture
def users(viewer, operator, approver, superuser):
    return {"viewer": viewer, "operator": operator, "approver": approver, "superuser": superuser}


def finance_models():
    return [
        (model, model_admin)
        for model, model_admin in admin.site._registry.items()
        if model._meta.app_label in {"wallets", "tournaments"}
    ]


@pytest.mark.parametrize("role", ROLES)
def test_every_page_renders_for_every_role(role, users, world):
    client = staff_client(users[role])
    pages = [reverse("admin:index")]
    for model, _ in finance_models():
        meta = model._meta
        pages.append(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"))
        obj = model.objects.order_by("pk").first()
        assert obj is not None, f"no {meta.model_name} in the test data"
        pages.append(reverse(f"admin:{meta.app_label}_{meta.model_name}_change", args=[obj.pk]))
    player = Account.objects.get(code="player:a:deposit").player
    fy = financial_year_of(timezone.now()).label
    pages += [
        reverse("admin:wallets_player_statement", args=[player.pk]),
        reverse("admin:tournaments_game_fee_report"),
        reverse("admin:tournaments_tournament_pnl"),
        reverse("admin:tournaments_tournament_promotions"),
        reverse("admin:wallets_tax_statement") + f"?player=a&fy={fy}",
        reverse("admin:wallets_tds_report") + f"?fy={fy}&quarter=3",
        reverse("admin:wallets_gst_report"),
    ]
    for page in pages:
        response = client.get(page)
        assert response.status_code == 200, (role, page, response.status_code)


def test_nobody_edits_the_ledger_not_even_a_superuser(superuser, world):
    client = staff_client(superuser)
    entry = Entry.objects.first()
    for model, obj in ((Entry, entry), (Transfer, entry.transfer), (Account, entry.account)):
        name = model._meta.model_name
        change = reverse(f"admin:wallets_{name}_change", args=[obj.pk])
        page = client.get(change)
        assert b'name="_save"' not in page.content
        assert client.post(change, {"amount_0": "999", "memo": "x"}).status_code == 403
        delete = reverse(f"admin:wallets_{name}_delete", args=[obj.pk])
        assert client.post(delete, {"post": "yes"}).status_code == 403
        assert client.get(reverse(f"admin:wallets_{name}_add")).status_code == 403
    assert Entry.objects.get(pk=entry.pk).amount == entry.amount


PROPOSE_PAGES = ["wallets_adjustment", "wallets_gatewaystatement", "tournaments_templatechange"]
# what no finance role may add: a `payments` key moves money, a template's money terms too
SUPERUSER_PAGES = ["api_apiclient", "tournaments_gametemplate"]


@pytest.mark.parametrize(
    ("role", "proposes"),
    [("viewer", False), ("operator", True), ("approver", False), ("superuser", True)],
)
def test_operators_propose_and_import_only_superusers_add_keys_and_templates(
    role, proposes, users, world
):
    client = staff_client(users[role])
    for name in PROPOSE_PAGES:
        status = client.get(reverse(f"admin:{name}_add")).status_code
        assert status == (200 if proposes else 403), (role, name, status)
    for name in SUPERUSER_PAGES:
        status = client.get(reverse(f"admin:{name}_add")).status_code
        assert status == (200 if role == "superuser" else 403), (role, name, status)


def adjustment_form(player, direction="credit", amount="25.00"):
    return {
        "player": player.pk,
        "bucket": "deposit",
        "direction": direction,
        "amount_value": amount,
        "reason": "refund of a disconnect",
    }


def test_viewer_cannot_propose(viewer, world):
    player = Account.objects.get(code="player:b:deposit").player
    count = Adjustment.objects.count()

    response = staff_client(viewer).post(
        reverse("admin:wallets_adjustment_add"), adjustment_form(player)
    )

    assert response.status_code == 403
    assert Adjustment.objects.count() == count


def approve(client, model: str, pk: int, action: str = "approve"):
    return client.post(
        reverse(f"admin:wallets_{model}_changelist"),
        {"action": action, "_selected_action": [pk]},
        follow=True,
    )


def test_operator_proposes_approver_approves(operator, approver, world):
    player = Account.objects.get(code="player:b:deposit").player
    before = Account.objects.get(code="player:b:deposit").balance.amount

    response = staff_client(operator).post(
        reverse("admin:wallets_adjustment_add"), adjustment_form(player), follow=True
    )
    assert response.status_code == 200
    adj = Adjustment.objects.get(player=player, reason="refund of a disconnect")
    assert (adj.proposed_by, adj.status, adj.transfer) == (operator, "proposed", None)
    assert Account.objects.get(code="player:b:deposit").balance.amount == before

    # the operator has no approve action
    approve(staff_client(operator), "adjustment", adj.pk)
    adj.refresh_from_db()
    assert adj.status == "proposed"

    response = approve(staff_client(approver), "adjustment", adj.pk)
    assert f"#{adj.pk} approved" in response.content.decode()
    adj.refresh_from_db()
    assert adj.status == "approved"
    assert Account.objects.get(code="player:b:deposit").balance.amount == before + Decimal("25")
    assert Transfer.objects.filter(reference=f"adjustment:{adj.pk}").count() == 1


@pytest.mark.parametrize("amount", ["1e3", "+25", "25.", " 1_000", "٢٥", "-25"])
def test_an_amount_that_is_not_a_plain_decimal_is_refused_on_the_form(operator, world, amount):
    player = Account.objects.get(code="player:b:deposit").player
    count = Adjustment.objects.count()

    response = staff_client(operator).post(
        reverse("admin:wallets_adjustment_add"), adjustment_form(player, amount=amount)
    )

    assert response.status_code == 200
    assert "amount_value" in response.context["adminform"].form.errors
    assert Adjustment.objects.count() == count


def _credit_of_b_proposed(operator) -> Adjustment:
    """A ₹25 credit to b's deposit, proposed by `operator`."""
    return adjustment_propose(
        proposed_by=operator,
        player=Account.objects.get(code="player:b:deposit").player,
        bucket="deposit",
        direction="credit",
        amount=Money("25.00", "INR"),
        reason="refund of a disconnect",
    )


def test_a_decision_other_than_approve_or_reject_decides_nothing(operator, approver, world):
    adj = _credit_of_b_proposed(operator)
    decide = reverse("admin:wallets_adjustment_decide", args=[adj.pk])

    page = staff_client(approver).post(decide, {"decision": "maybe", "note": "hmm"}, follow=True)

    assert "not decided: a decision is approve or reject, not &#x27;maybe&#x27;" in (
        page.content.decode()
    )
    adj.refresh_from_db()
    assert (adj.status, adj.decided_by) == ("proposed", None)


def test_a_second_decision_in_admin_is_refused_and_logs_nothing(
    operator, approver, approver2, world
):
    from django.contrib.admin.models import LogEntry

    adj = _credit_of_b_proposed(operator)
    decide = reverse("admin:wallets_adjustment_decide", args=[adj.pk])
    staff_client(approver).post(
        decide, {"decision": "approve", "note": "checked the logs"}, follow=True
    )
    logged = LogEntry.objects.count()

    for decision, verb in (("approve", "approved"), ("reject", "rejected")):
        page = staff_client(approver2).post(
            decide, {"decision": decision, "note": "mine"}, follow=True
        )
        text = page.content.decode()
        assert f"#{adj.pk} {verb}." not in text
        assert (
            f"#{adj.pk} not {verb}: adjustment #{adj.pk} was already approved by approver" in text
        )
    # the list action too
    text = approve(staff_client(approver2), "adjustment", adj.pk).content.decode()
    assert f"#{adj.pk} not approved: adjustment #{adj.pk} was already approved" in text

    assert LogEntry.objects.count() == logged
    adj.refresh_from_db()
    assert (adj.decided_by, adj.decision_note) == (approver, "checked the logs")
    assert Transfer.objects.filter(reference=f"adjustment:{adj.pk}").count() == 1


def test_admin_shows_why_a_debit_or_a_self_approval_is_refused(operator, approver, world):
    both = staff("both", "finance operator", "finance approver")
    player = Account.objects.get(code="player:b:deposit").player
    staff_client(both).post(reverse("admin:wallets_adjustment_add"), adjustment_form(player))
    own = Adjustment.objects.get(proposed_by=both)
    response = approve(staff_client(both), "adjustment", own.pk)
    assert "someone other than its proposer" in response.content.decode()
    count = Adjustment.objects.count()

    response = staff_client(operator).post(
        reverse("admin:wallets_adjustment_add"), adjustment_form(player, "debit", "99999.00")
    )

    assert response.status_code == 200  # the form again, with the reason
    assert "would take player:b:deposit below zero (it holds ₹" in response.content.decode()
    assert Adjustment.objects.count() == count
    assert Adjustment.objects.filter(status="approved").count() == 0


def test_game_reversal_through_the_admin(operator, approver, game_server):
    game = points_game(game_server, "g1")
    url = reverse("admin:tournaments_game_propose_reversal", args=[game.pk])
    assert staff_client(staff("v", "finance viewer")).get(url).status_code == 403
    assert staff_client(approver).post(url, {"reason": "x"}).status_code == 403

    response = staff_client(operator).post(url, {"reason": "collusion ring"})
    assert response.status_code == 302
    rev = Reversal.objects.get(reference=f"game:{game.pk}")
    assert not Transfer.objects.filter(kind="reversal").exists()

    approve(staff_client(operator), "reversal", rev.pk)
    assert not Transfer.objects.filter(kind="reversal").exists()
    response = approve(staff_client(approver), "reversal", rev.pk)
    assert f"#{rev.pk} approved" in response.content.decode()
    assert Transfer.objects.filter(kind="reversal").count() == len(rev.transfer_ids)


def test_statement_with_running_balance_and_csv(viewer, world):
    player = Account.objects.get(code="player:a:deposit").player
    url = reverse("admin:wallets_player_statement", args=[player.pk])
    today = timezone.localdate().isoformat()
    params = {"bucket": "deposit", "start": today, "end": today}

    page = staff_client(viewer).get(url, params)
    assert page.status_code == 200
    lines = page.context["statement"].lines
    assert [str(line.running_balance.amount) for line in lines] == ["500.00", "340.00", "500.00"]

    csv_response = staff_client(viewer).get(url, {**params, "format": "csv"})
    assert csv_response["Content-Type"] == "text/csv; charset=utf-8"
    rows = csv_response.content.decode("utf-8-sig").splitlines()
    assert rows[0].startswith("time,transfer,kind")
    assert rows[-1].endswith(",500.00,INR") and len(rows) == 6  # header, opening, 3, closing


def test_player_changelist_is_one_query_for_balances(viewer, world, django_assert_max_num_queries):
    client = staff_client(viewer)
    url = reverse("admin:wallets_player_changelist")
    client.get(url)
    with django_assert_max_num_queries(8):
        page = client.get(url)
    html = page.content.decode()
    assert "₹500.00" in html and "INR" not in html and "CHP" not in html


def test_fee_report_table_chart_and_csv(viewer, world):
    url = reverse("admin:tournaments_game_fee_report")
    today = timezone.localdate().isoformat()

    page = staff_client(viewer).get(url, {"start": today, "end": today})

    rows = page.context["rows"]
    assert [(r["format"], r["fee"]) for r in rows] == [("points", world.fee)]
    html = page.content.decode()
    assert '<svg id="fee-chart"' in html and "<rect" in html
    csv_response = staff_client(viewer).get(url, {"start": today, "end": today, "format": "csv"})
    assert (
        csv_response.content.decode("utf-8-sig").splitlines()[1]
        == f"{today},points,INR,{world.fee},1"
    )


def test_only_operators_start_a_reconciliation(viewer, operator, world):
    url = reverse("admin:wallets_reconciliationreport_run")
    assert staff_client(viewer).post(url).status_code == 403
    assert (
        b"Run reconciliation now"
        not in staff_client(viewer)
        .get(reverse("admin:wallets_reconciliationreport_changelist"))
        .content
    )
    with mock.patch("wallets.tasks.reconcile_nightly.delay") as delay:
        from django.test import TestCase

        with TestCase.captureOnCommitCallbacks(execute=True):
            response = staff_client(operator).post(url)
    assert response.status_code == 302
    delay.assert_called_once_with("admin", operator.pk)


def test_the_reports_list_reloads_until_the_run_asked_for_has_finished(operator, world):
    """After "Run reconciliation now" the list reloads itself until that run's report has
    finished, even when the worker starts the run while the page is deciding (the run is made
    to start right after the page's first look at the reports)."""
    client = staff_client(operator)
    with mock.patch("wallets.tasks.reconcile_nightly.delay"):
        client.post(reverse("admin:wallets_reconciliationreport_run"))
    started = []

    def run_starts_after_first_look(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if "wallets_reconciliationreport" in sql and not started:
            started.append("starting")  # the insert below passes through here too
            started[0] = ReconciliationReport.objects.create(trigger="admin", started_by=operator)
        return result

    listing = reverse("admin:wallets_reconciliationreport_changelist")
    with connection.execute_wrapper(run_starts_after_first_look):
        page = client.get(listing).content.decode()
    assert started and 'http-equiv="refresh"' in page

    started[0].status = ReconciliationReport.Status.CLEAN
    started[0].save(update_fields=["status"])
    page = client.get(listing).content.decode()
    assert 'http-equiv="refresh"' not in page and "clean" in page
    assert 'http-equiv="refresh"' not in client.get(listing).content.decode()  # the wait is over


def test_api_client_key_is_shown_once(superuser, db):
    client = staff_client(superuser)
    response = client.post(
        reverse("admin:api_apiclient_add"),
        {"name": "table-server-7", "scopes": ["games"]},
        follow=True,
    )
    html = response.content.decode()
    assert "rl_" in html and "never be shown again" in html
    again = client.get(reverse("admin:api_apiclient_changelist")).content.decode()
    assert "never be shown again" not in again


def test_no_finance_role_issues_or_changes_api_keys(users, world):
    """An operator may not mint a `payments` key and credit ₹50,000 with no approver. API
    clients are a superuser's, whatever a group grants."""
    from rummy_ledger.api.models import ApiClient

    existing = ApiClient.objects.get(name="game-server-1")
    names = sorted(ApiClient.objects.values_list("name", "is_active"))
    for role in ("viewer", "operator", "approver"):
        client = staff_client(users[role])
        add = client.post(
            reverse("admin:api_apiclient_add"), {"name": "minted", "scopes": ["payments"]}
        )
        change = client.post(
            reverse("admin:api_apiclient_change", args=[existing.pk]), {"is_active": ""}
        )
        assert (add.status_code, change.status_code) == (403, 403), role
        assert not users[role].has_perm("api.add_apiclient")
    assert sorted(ApiClient.objects.values_list("name", "is_active")) == names
    # nor pair clients: a pairing widens whom a games key may stake (docs/trust-model.md)
    for role in ("viewer", "operator", "approver"):
        add = staff_client(users[role]).post(
            reverse("admin:wallets_clientpairing_add"),
            {"games_client": existing.pk, "payments_client": existing.pk},
        )
        assert add.status_code == 403, role


def test_gateway_statement_upload(operator, viewer, world):
    from django.core.files.uploadedfile import SimpleUploadedFile

    url = reverse("admin:wallets_gatewaystatement_add")
    body = b"reference,amount,date,type\nfund-a-500.00,500.00,2026-01-01,deposit\n"
    upload = SimpleUploadedFile("gw2.csv", body, content_type="text/csv")
    response = staff_client(operator).post(url, {"name": "gw2", "file": upload}, follow=True)
    assert response.status_code == 200
    from wallets.models import GatewayStatement

    assert GatewayStatement.objects.filter(name="gw2").exists()
    bad = SimpleUploadedFile("bad.csv", b"nope\n1\n", content_type="text/csv")
    response = staff_client(operator).post(url, {"name": "bad", "file": bad})
    assert response.status_code == 200 and "needs the columns" in response.content.decode()


def test_game_page_shows_the_settlement_breakdown(viewer, world):
    page = staff_client(viewer).get(reverse("admin:tournaments_game_change", args=[world.pk]))
    html = page.content.decode()
    assert "balanced" in html and "DOES NOT BALANCE" not in html
    deal = world.deals.get()
    assert deal.discrepancies, "the builder claims 45 points where the engine computes 50"
    assert "points (computed)" in html and "claimed differs" in html
    assert f"?q=game:{world.pk}" in html  # the game's transfers


def test_operators_edit_a_templates_other_fields_never_its_money_terms(operator, viewer, world):
    from tournaments.models import GameTemplate

    tpl = GameTemplate.objects.get(slug="points-2")
    url = reverse("admin:tournaments_gametemplate_change", args=[tpl.pk])
    data = {
        "slug": tpl.slug,
        "name": "Points ₹2",
        "format": tpl.format,
        "currency": "CHP",
        "seats": 6,
        "point_value": "9.00",
        "entry_fee": "",
        "fee_percent": "0.00",
        "deals": "",
        "rules": "{}",
        "split_policy": tpl.split_policy,
        "entry_buckets": '["bonus", "deposit", "winnings"]',
        "bonus_cap_percent": "10.00",
        "active": "on",
    }
    assert staff_client(viewer).post(url, data).status_code == 403
    page = staff_client(operator).get(url).content.decode()
    assert "Propose new money terms" in page and 'name="fee_percent"' not in page

    response = staff_client(operator).post(url, data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    tpl.refresh_from_db()
    assert tpl.name == "Points ₹2"  # the name changed, the money terms did not
    assert (tpl.currency, tpl.point_value, tpl.fee_percent) == (
        "INR",
        Decimal("2.00"),
        Decimal("10.00"),
    )


def test_approve_and_reject_buttons_on_the_proposal_page(operator, approver, viewer, alice):
    player = alice["deposit"].player
    adj = Adjustment.objects.create(
        player=player,
        bucket="deposit",
        direction="credit",
        amount=Money("5.00", "INR"),
        reason="x",
        proposed_by=operator,
    )
    page = reverse("admin:wallets_adjustment_change", args=[adj.pk])
    decide = reverse("admin:wallets_adjustment_decide", args=[adj.pk])
    assert "decide-form" not in staff_client(viewer).get(page).content.decode()
    assert "decide-form" in staff_client(approver).get(page).content.decode()
    assert staff_client(viewer).post(decide, {"decision": "approve"}).status_code == 403
    assert staff_client(operator).post(decide, {"decision": "approve"}).status_code == 403

    response = staff_client(approver).post(decide, {"decision": "reject"}, follow=True)

    assert f"#{adj.pk} rejected" in response.content.decode()
    adj.refresh_from_db()
    assert adj.status == "rejected" and adj.transfer is None


def changelist_ids(client, name: str, q: str) -> set[int]:
    response = client.get(reverse(f"admin:{name}_changelist"), {"q": q})
    assert response.status_code == 200
    return {obj.pk for obj in response.context["cl"].result_list}


def test_searches_by_player_game_reference_and_key(viewer, world):
    client = staff_client(viewer)
    game_transfers = set(game_transfer_ids(world))
    assert changelist_ids(client, "wallets_transfer", f"game:{world.pk}") == game_transfers
    alice_transfers = changelist_ids(client, "wallets_transfer", "a")
    assert alice_transfers >= {Transfer.objects.get(idempotency_key="deposit:fund-a-500.00").pk}
    assert changelist_ids(client, "wallets_transfer", "deposit:fund-a-500.00") == {
        Transfer.objects.get(idempotency_key="deposit:fund-a-500.00").pk
    }
    entries = changelist_ids(client, "wallets_entry", "player:a:deposit")
    assert entries == set(
        Entry.objects.filter(account__code="player:a:deposit").values_list("pk", flat=True)
    )
    assert changelist_ids(client, "wallets_entry", "a") >= entries
    game_entries = changelist_ids(client, "wallets_entry", f"game:{world.pk}")
    assert {e.transfer_id for e in Entry.objects.filter(pk__in=game_entries)} == game_transfers
    assert changelist_ids(client, "tournaments_game", "b") == {world.pk}
    assert changelist_ids(client, "tournaments_game", "g1") == {world.pk}
    assert changelist_ids(client, "wallets_player", "a") == {
        Account.objects.get(code="player:a:deposit").player_id
    }
    response = client.get(
        reverse("admin:wallets_entry_changelist"), {"created_at__gte": "2000-01-01 00:00:00+05:30"}
    )
    assert response.status_code == 200
