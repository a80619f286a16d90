"""What finance staff do in the admin, done in a real browser, role by role (docs/finance-admin.md).

The data comes from the real services: a settled points game posted by a game server, funded
players, proposals made through `wallets.adjustments`.
"""

from __future__ import annotations

import codecs
import csv
import io
from decimal import Decimal
from pathlib import Path

import pytest
from django.utils import timezone
from djmoney.money import Money

from rummy_ledger.api.keys import api_client_create
from tests.browser.conftest import GAME_ID
from tests.tournaments.worker import Worker, private_queue, wait_until
from tournaments.games.queries import game_transfer_ids
from wallets.models import Account, Adjustment, Entry, ReconciliationReport, Reversal, Transfer
from wallets.services.adjustments import adjustment_propose

pytestmark = pytest.mark.django_db(transaction=True)

READERS = ["viewer", "operator", "approver", "superuser"]  # every role that reads the books
QUICK_MS = 5_000  # a button that works answers at once; one that does nothing fails this fast


def deposit(external_id: str) -> Decimal:
    return Account.objects.get(code=f"player:{external_id}:deposit").balance.amount


def post_form(tab, path: str, **fields) -> None:
    """Submit a form the page does not offer (what a hidden button would have posted), with the
    page's own CSRF token."""
    tab.page.evaluate(
        """([action, fields]) => {
            const form = document.createElement("form");
            form.method = "post";
            form.action = action;
            const token = document.querySelector("[name=csrfmiddlewaretoken]").value;
            for (const [name, value] of Object.entries({...fields, csrfmiddlewaretoken: token})) {
                const input = document.createElement("input");
                input.type = "hidden";
                input.name = name;
                input.value = value;
                form.appendChild(input);
            }
            document.body.appendChild(form);
            form.submit();
        }""",
        [path, fields],
    )


def fill_adjustment(tab, player: str, direction: str, amount: str, reason: str) -> None:
    """Propose an adjustment of the player's deposit bucket on the open add form, and save."""
    tab.page.click("#id_player + .select2 .select2-selection")  # the autocomplete widget
    tab.page.fill(".select2-search__field", player)
    tab.page.click(f".select2-results__option:text-is('{player}')")
    tab.page.select_option("#id_bucket", "deposit")
    tab.page.select_option("#id_direction", direction)
    tab.page.fill("#id_amount_value", amount)
    tab.page.fill("#id_reason", reason)
    tab.page.click("input[name=_save]")


def download(tab, click_selector: str):
    """Click what should start a download; return (file name, text). A CSV starts with the
    byte order mark a spreadsheet needs to read it as UTF-8."""
    with tab.page.expect_download(timeout=QUICK_MS) as info:
        tab.page.click(click_selector)
    got = info.value
    raw = Path(got.path()).read_bytes()
    assert raw.startswith(codecs.BOM_UTF8), raw[:20]
    return got.suggested_filename, raw.decode("utf-8-sig")


@pytest.mark.parametrize("role", ["viewer", "operator", "approver", "superuser"])
def test_each_role_logs_in_and_sees_the_finance_apps(role, login):
    tab = login(role, through_form=True)

    apps = tab.text("#content-main")

    assert "Ledger and wallets" in apps or "LEDGER AND WALLETS" in apps
    for model in ("Accounts", "Transfers", "Entries", "Adjustments", "Reconciliation reports"):
        assert model in apps


@pytest.mark.parametrize("role", READERS)
def test_statement_and_its_csv_on_first_load(role, login, game):
    """Item 3: 'Export CSV' right after the statement opens (its default filters) downloads the
    CSV of what is shown; it used to drop the filters and fail with 'This field is required'."""
    tab = login(role)
    tab.visit("/admin/wallets/player/?q=a", "players")
    tab.page.click("#result_list a:text-is('statement')")
    tab.shot("statement")
    page = tab.text()
    assert "opening balance" in page and "closing balance" in page
    assert "₹500.00" in page  # the deposit, as a finance user reads it

    name, content = download(tab, "text=Export CSV")

    rows = list(csv.reader(io.StringIO(content)))
    assert name.startswith("statement-player_a_deposit-")
    assert rows[0] == [
        "time",
        "transfer",
        "kind",
        "reference",
        "memo",
        "amount (₹)",
        "balance (₹)",
        "currency",
    ]
    amounts = [row[5] for row in rows[2:-1]]
    assert amounts == ["500.00", "-160.00", "160.00"]  # deposit, into escrow, escrow returned
    assert rows[-1][2:] == ["closing", "", "", "", "500.00", "INR"]


@pytest.mark.parametrize("role", READERS)
def test_fee_report_and_its_csv_on_first_load(role, login, game):
    """Item 3 again, on the fee report: linked from the games list, exported on first load."""
    tab = login(role)
    tab.visit("/admin/tournaments/game/", "games")
    tab.page.click("text=Fee report")
    tab.shot("fee-report")
    assert tab.page.locator("#fee-chart rect").count() == 1
    assert f"₹{game.fee:.2f}" in tab.text("#fee-rows")
    assert f"₹{game.fee:.2f}" in tab.text("#fee-grand-total")  # the grand total
    assert tab.page.locator("#fee-chart text.date").count() >= 7  # a date axis
    assert f"₹{game.fee:.2f}" in tab.page.locator("#fee-chart").text_content()  # a ₹ scale
    assert "the GST report and the TDS report" in tab.text("#tax-reports")  # linked, not repeated

    name, content = download(tab, "text=Export CSV")

    today = timezone.localdate()
    assert name == f"fees-{today - timezone.timedelta(days=13)}-{today}.csv"
    assert content.splitlines() == [
        "day,format,currency,fee (₹),games",
        f"{today},points,INR,{game.fee:.2f},1",
    ]


@pytest.mark.parametrize("role", READERS)
def test_find_a_game_and_its_transfers(role, login, game):
    tab = login(role)
    tab.visit(f"/admin/tournaments/game/?q={GAME_ID}", "games-search")
    tab.page.click(f"#result_list a:text-is('{GAME_ID}')")
    tab.shot("game")
    assert "balanced" in tab.text()

    tab.page.click("text=transfers of this game")
    tab.shot("game-transfers")

    shown = tab.page.locator("#result_list tbody tr").count()
    assert shown == len(game_transfer_ids(game)) > 0


@pytest.mark.parametrize("role", READERS)
def test_search_transfers_and_entries_by_the_external_game_id(role, login, game):
    """Item 5: the game id staff know (`sim-597bcd-5`) finds the game's transfers and entries."""
    tab = login(role)
    tab.visit("/admin/wallets/transfer/", "transfers")
    tab.page.fill("#searchbar", GAME_ID)
    with tab.page.expect_navigation():
        tab.page.press("#searchbar", "Enter")
    tab.shot("transfers-search-game-id")

    assert tab.page.locator("#result_list tbody tr").count() == len(game_transfer_ids(game))
    assert tab.page.locator("#result_list td.field-game", has_text=GAME_ID).count() > 0

    tab.visit(f"/admin/wallets/entry/?q={GAME_ID}", "entries-search-game-id")
    entries = Entry.objects.filter(transfer_id__in=game_transfer_ids(game)).count()
    assert tab.page.locator("#result_list tbody tr").count() == entries


def test_operator_proposes_and_approver_approves_on_its_page(login, game):
    """Item 1: Approve on the proposal's own page posts the money (the buttons were dead: their
    form was nested in the admin's form, which the browser drops)."""
    operator = login("operator")
    operator.visit("/admin/wallets/adjustment/", "adjustments")
    operator.page.click(".object-tools a.addlink")
    operator.shot("adjustment-add")
    fill_adjustment(operator, "b", "credit", "25.00", "refund of a disconnect")
    operator.shot("adjustment-proposed")
    assert "added successfully" in operator.messages()
    adjustment = Adjustment.objects.get()
    assert (adjustment.status, adjustment.proposed_by) == ("proposed", operator.user)
    before = deposit("b")

    approver = login("approver")
    approver.visit(f"/admin/wallets/adjustment/{adjustment.pk}/change/", "adjustment")
    assert "adjustment #" in approver.text("#content h2") and "to b (deposit)" in approver.text()
    approver.page.fill("#decision textarea", "ticket 4711")
    with approver.page.expect_navigation(timeout=QUICK_MS):
        approver.page.click("#decision button[value=approve]")
    approver.shot("adjustment-approved")

    assert f"#{adjustment.pk} approved" in approver.messages()
    adjustment.refresh_from_db()
    assert adjustment.status == "approved" and adjustment.transfer_id is not None
    assert adjustment.decision_note == "ticket 4711" and "ticket 4711" in approver.text()
    assert deposit("b") == before + Decimal("25.00")
    approver.visit(f"/admin/wallets/player/{adjustment.player_id}/change/", "player")
    assert f"deposit: ₹{before + Decimal('25.00')}" in approver.text()


def test_an_approver_cannot_approve_their_own_proposal(login, game):
    tab = login("operator-approver")
    player = Account.objects.get(code="player:c:deposit").player
    own = adjustment_propose(
        proposed_by=tab.user,
        player=player,
        bucket="deposit",
        direction="credit",
        amount=Money("40.00", "INR"),
        reason="goodwill",
    )
    before = deposit("c")
    tab.visit(f"/admin/wallets/adjustment/{own.pk}/change/", "adjustment-own")
    assert tab.page.locator("#decision").count() == 0  # no buttons on one's own proposal
    assert "You proposed this" in tab.text()

    with tab.page.expect_navigation(timeout=QUICK_MS):  # the decision posted anyway
        post_form(tab, f"/admin/wallets/adjustment/{own.pk}/decide/", decision="approve")
    tab.shot("adjustment-own-refused")

    assert "not approved" in tab.messages() and "proposer" in tab.messages()
    own.refresh_from_db()
    assert own.status == "proposed" and own.transfer_id is None
    assert deposit("c") == before


def test_who_may_not_decide_sees_no_buttons_and_is_refused(login, game):
    operator = login("operator")
    proposal = adjustment_propose(
        proposed_by=operator.user,
        player=Account.objects.get(code="player:d:deposit").player,
        bucket="deposit",
        direction="credit",
        amount=Money("5.00", "INR"),
        reason="x",
    )
    viewer = login("viewer")
    viewer.visit(f"/admin/wallets/adjustment/{proposal.pk}/change/", "adjustment")
    assert viewer.page.locator("#decision").count() == 0
    assert viewer.page.locator(".object-tools a.addlink").count() == 0

    with viewer.refused(403):
        response = viewer.page.goto(f"{viewer.base_url}/admin/wallets/adjustment/add/")
        viewer.shot("adjustment-add-refused")
    assert response.status == 403
    assert Adjustment.objects.get().status == "proposed"


def test_propose_and_approve_the_reversal_of_a_settled_game(login, game):
    operator = login("operator")
    operator.visit(f"/admin/tournaments/game/{game.pk}/change/", "game")
    operator.page.click("text=Propose a reversal")
    operator.shot("reversal-propose")
    operator.page.fill("#id_reason", "collusion ring")
    operator.page.click("input[type=submit][value='Propose the reversal']")
    operator.shot("reversal-proposed")
    assert "proposed" in operator.messages()
    reversal = Reversal.objects.get(reference=f"game:{game.pk}")
    assert not Transfer.objects.filter(kind="reversal").exists()

    approver = login("approver")
    approver.visit(f"/admin/wallets/reversal/{reversal.pk}/change/", "reversal")
    with approver.page.expect_navigation(timeout=QUICK_MS):
        approver.page.click("#decision button[value=approve]")
    approver.shot("reversal-approved")

    assert f"#{reversal.pk} approved" in approver.messages()
    assert approver.page.locator(".field-posted a").count() == len(reversal.transfer_ids)
    assert Transfer.objects.filter(kind="reversal").count() == len(reversal.transfer_ids)
    assert [deposit(p) for p in "abcd"] == [Decimal("500.00")] * 4  # as before the game
    approver.visit(f"/admin/tournaments/game/{game.pk}/change/", "game-reversed")


def test_run_reconciliation_from_admin_and_open_the_report(login, game):
    with private_queue() as queue:
        worker = Worker(queue, concurrency=1)  # a real worker; it boots while the browser works
        try:
            viewer = login("viewer")
            viewer.visit("/admin/wallets/reconciliationreport/", "reconciliation")
            assert viewer.page.locator("text=Run reconciliation now").count() == 0

            operator = login("operator")
            operator.visit("/admin/wallets/reconciliationreport/", "reconciliation")
            operator.page.click("text=Run reconciliation now")
            operator.shot("reconciliation-started")
            assert "Reconciliation started" in operator.messages()
            finished = ReconciliationReport.objects.filter(started_by=operator.user).exclude(
                status=ReconciliationReport.Status.RUNNING
            )
            assert wait_until(finished.exists, timeout=60)
            report = finished.get()
            found = list(report.discrepancies.values_list("kind", "subject"))
            assert report.status == ReconciliationReport.Status.CLEAN, (report.error, found)
            # the list reloads itself while a run is in progress: no need to press anything
            operator.page.locator("#result_list td.field-status", has_text="clean").wait_for(
                timeout=20_000
            )
        finally:
            worker.stop()

    operator.visit("/admin/wallets/reconciliationreport/", "reconciliation-done")
    operator.page.click("#result_list tbody th a")
    operator.shot("reconciliation-report")
    report = operator.text()
    assert "clean" in report.lower() and "Discrepancy count:\n0" in report
    assert "Snapshot read from:\nRead from the primary." in report  # no standby configured


def test_the_api_docs_render(login):
    """Swagger UI's files come from drf-spectacular-sidecar through WhiteNoise."""
    tab = login("viewer")
    tab.visit("/api/docs/", "api-docs")
    tab.page.wait_for_selector(".swagger-ui .info")

    assert "rummy-ledger API" in tab.text(".swagger-ui .info")


def test_the_api_docs_authorize_box_takes_api_key_and_the_key(login):
    """docs/api.md's recipe: Authorize, `Api-Key <key>`, then "Try it out" answers 200."""
    _, key = api_client_create(name="docs-reader", scopes=["games"])
    tab = login("viewer")
    tab.visit("/api/docs/", "api-docs")
    tab.page.click("button.btn.authorize")
    tab.page.fill(".auth-container input[type=text]", f"Api-Key {key}")
    tab.page.click(".auth-btn-wrapper button.authorize")
    tab.page.click(".auth-btn-wrapper button.btn-done")
    tab.page.click('.opblock-summary-path[data-path="/api/v1/templates"]')
    tab.page.click("button.try-out__btn")
    tab.page.click("button.execute")
    status = tab.page.locator(".live-responses-table tr.response .response-col_status").first
    status.wait_for()
    tab.shot("api-docs-authorized")

    assert status.inner_text().strip() == "200"
