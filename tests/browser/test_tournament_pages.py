"""Finance's tournament pages in a real browser, per role: the list (status, players, pool,
overlay) and a tournament's page (registrations with what each paid by bucket, rounds, results
and prizes), read-only for everyone; the P&L; a new tournament and new money terms, each
proposed by one person and approved by another."""

from datetime import timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from rummy_ledger.api.keys import api_client_create
from tests.browser.test_finance_paths import QUICK_MS, download
from tests.builders import bonus_granted, funded_player
from tests.tournaments.tournament_builders import pnl_books, scheduled, spend_books
from tournaments.models import NewTournament, Tournament, TournamentChange
from tournaments.tournaments.services import entries, rounds

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def finished():
    client, _ = api_client_create(name="lobby", scopes=["games"])
    scheduled(rounds=[{"final": True}], max_players=6, rebuy=None)
    bonus_granted("ana", "50.00")
    for p in ("ana", "bo", "cy", "di"):
        funded_player(p, "500.00")
        entries.registration_create(client=client, slug="sunday-100", player=p)
    rounds.tournament_start(client=client, slug="sunday-100")
    table = {"table": "F", "standings": [
        {"player": p, "position": n, "chips": 0} for n, p in enumerate(["cy", "ana", "bo", "di"], 1)
    ]}  # fmt: skip
    stored = rounds.round_store(client=client, slug="sunday-100", number=1, tables=[table])
    rounds.round_settle(round_id=stored.pk)
    return Tournament.objects.get()


@pytest.mark.parametrize("role", ["viewer", "operator", "approver"])
def test_finance_sees_the_tournaments_and_their_money(login, finished, role):
    tab = login(role)
    tab.visit("/admin/tournaments/tournament/", f"tournaments--{role}")
    row = tab.page.locator("#result_list tbody tr", has_text="sunday-100").inner_text()
    assert "Finished" in row and "₹500.00" in row and "₹160.00" in row  # pool, overlay
    tab.page.click("#result_list tbody tr a:has-text('sunday-100')")
    tab.shot(f"tournament--{role}")
    text = tab.text()
    assert "₹10.00 from bonus, ₹90.00 from deposit" in text  # ana: the bonus cap of 10 %
    assert "₹250.00" in text  # cy, rank 1: 50 % of the 500 pool
    assert tab.page.locator("input[type=submit][name=_save]").count() == 0


def test_each_role_reads_the_tournament_pnl_and_exports_it(login):
    """The tournament P&L: linked from the home page's reports; Show (by month too) and Export CSV
    clicked by every role, a refused period shown on the form."""
    pnl_books(api_client_create(name="lobby", scopes=["games"])[0])
    today = timezone.localdate()
    for role in ("viewer", "operator", "approver"):
        tab = login(role)
        tab.page.click("#finance-reports a:text-is('Tournament P&L')")
        tab.shot("tournament-pnl")
        assert tab.page.locator("#pnl-chart rect").count() == 2  # cash fee and overlay
        totals = tab.text("#pnl-totals")
        assert "₹67.50" in totals and "₹117.50" in totals and "-₹50.00" in totals
        assert "1,000 chips" in totals  # chips apart, never added to rupees

        name, content = download(tab, "text=Export CSV")
        assert name == f"tournament-pnl-day-{today - timedelta(days=13)}-{today}.csv"
        assert f"{today},INR,600.00,50.00,67.50,117.50,500.00,200.00,-50.00" in content

        tab.page.select_option("#id_by", "month")
        with tab.page.expect_navigation(timeout=QUICK_MS):
            tab.page.click("input[value=Show]")
        tab.shot("tournament-pnl-by-month")
        assert today.strftime("%B %Y") in tab.text("#pnl-rows")
        if role != "viewer":
            continue  # the form's refusal is the same for everyone: once is enough

        tab.page.fill("#id_start", today.isoformat())  # a refused period: on the form
        tab.page.fill("#id_end", (today - timedelta(days=1)).isoformat())
        with tab.page.expect_navigation(timeout=QUICK_MS):
            tab.page.click("input[value=Show]")
        tab.shot("tournament-pnl-refused")
        assert "The end comes before the start." in tab.text()


def test_each_role_reads_the_promotions_spend_filters_it_and_exports_it(login):
    """The promotions spend: linked from the home page's reports and the tournaments' list; Show
    (a period without spend, then today) and Export CSV clicked by every role; a refused period
    shown on the form."""
    spend_books(api_client_create(name="lobby", scopes=["games"])[0])
    today = timezone.localdate()
    yesterday = today - timedelta(days=1)
    for role in ("viewer", "operator", "approver"):
        tab = login(role)
        tab.page.click("#finance-reports a:text-is('Promotions spend')")
        tab.shot("promotions-spend")
        totals = tab.text("#spend-totals")
        assert "₹117.50" in totals and "₹200.00" in totals and "-₹100.00" in totals
        assert "₹267.50" in totals and "1,000 chips" in totals  # chips apart

        name, content = download(tab, "text=Export CSV")
        assert name == f"promotions-spend-{today - timedelta(days=13)}-{today}.csv"
        assert f"{today},INR,117.50,200.00,-100.00,30.00,20.00,0.00,0.00,267.50" in content

        tab.page.fill("#id_start", yesterday.isoformat())  # a day without spend
        tab.page.fill("#id_end", yesterday.isoformat())
        with tab.page.expect_navigation(timeout=QUICK_MS):
            tab.page.click("input[value=Show]")
        tab.shot("promotions-spend-yesterday")
        assert "Nothing moved promotions in this period." in tab.text("#spend-totals")
        name, content = download(tab, "text=Export CSV")
        assert name == f"promotions-spend-{yesterday}-{yesterday}.csv"
        assert len(content.strip().splitlines()) == 1  # the header alone
        if role != "viewer":
            continue  # the form's refusal and the list's link are the same for everyone

        tab.visit("/admin/tournaments/tournament/", "tournaments-with-spend")
        with tab.page.expect_navigation(timeout=QUICK_MS):
            tab.page.click(".object-tools a:text-is('Promotions spend')")
        assert "₹267.50" in tab.text("#spend-rows")
        tab.page.fill("#id_start", today.isoformat())  # a refused period: on the form
        tab.page.fill("#id_end", yesterday.isoformat())
        with tab.page.expect_navigation(timeout=QUICK_MS):
            tab.page.click("input[value=Show]")
        tab.shot("promotions-spend-refused")
        assert "The end comes before the start." in tab.text()


def fill_terms(tab, **boxes) -> None:
    for name, value in boxes.items():
        tab.page.fill(f"#id_{name}", value)


def test_a_tournament_and_its_money_terms_are_proposed_and_approved_by_two_people(login):
    """Finance creates a tournament in admin, and changes its money terms, each approved by
    another person; the maker cannot approve their own; a viewer sees no button."""
    api_client_create(name="lobby", scopes=["games"])
    maker = login("operator-approver")  # may approve, but never their own
    maker.visit("/admin/tournaments/tournament/", "tournaments-empty")
    maker.page.click("text=Propose a new tournament")
    maker.shot("new-tournament-add")
    closes = timezone.localtime() + timedelta(days=2)
    fill_terms(
        maker, slug="friday-250", name="Friday 250", entry_fee="250.00", fee_percent="15.00",
        guarantee="5000.00", rebuy_price="100.00", rebuy_max_per_player="1",
        rebuy_until_round="1", prizes="1 50.00\n2-3 20.00", min_players="4", max_players="60",
        registration_closes_at_0=closes.date().isoformat(), registration_closes_at_1="20:00:00",
        reason="Friday series",
    )  # fmt: skip
    maker.page.select_option("#id_client", "lobby")
    maker.page.click("input[name=_save]")
    maker.shot("new-tournament-refused")
    assert "prizes: the percentages add up to 90.00, not exactly 100" in maker.text(".errorlist")
    assert not NewTournament.objects.exists()
    fill_terms(maker, prizes="1 50.00\n2-3 25.00")
    maker.page.click("input[name=_save]")
    maker.shot("new-tournament-proposed")
    proposal = NewTournament.objects.get()
    maker.visit(f"/admin/tournaments/newtournament/{proposal.pk}/change/", "new-tournament")
    assert maker.page.locator("#decision").count() == 0 and "You proposed this" in maker.text()

    approver = login("approver")
    approver.visit(f"/admin/tournaments/newtournament/{proposal.pk}/change/", "new-tournament")
    assert "₹5,000.00" in approver.text()  # the guarantee, as finance reads it
    with approver.page.expect_navigation(timeout=QUICK_MS):
        approver.page.click("#decision button[value=approve]")
    approver.shot("new-tournament-approved")
    tournament = Tournament.objects.get(slug="friday-250")
    assert tournament.entry_fee == Decimal("250.00") and tournament.max_players == 60

    maker.page.goto(f"{maker.base_url}/admin/tournaments/tournament/{tournament.pk}/change/")
    maker.page.click("text=Propose new money terms")
    maker.shot("tournament-change-add")
    assert maker.page.input_value("#id_entry_fee") == "250.00"  # from the terms in force
    fill_terms(maker, entry_fee="300.00", reason="bigger Friday")
    maker.page.click("input[name=_save]")
    maker.shot("tournament-change-proposed")
    change = TournamentChange.objects.get()

    approver.visit(f"/admin/tournaments/tournamentchange/{change.pk}/change/", "tournament-change")
    assert "entry fee: ₹250.00 → ₹300.00" in approver.text()
    with approver.page.expect_navigation(timeout=QUICK_MS):
        approver.page.click("#decision button[value=approve]")
    approver.shot("tournament-change-approved")
    assert f"#{change.pk} approved" in approver.messages()
    tournament.refresh_from_db()
    assert tournament.entry_fee == Decimal("300.00")
    approver.visit(f"/admin/tournaments/tournament/{tournament.pk}/change/", "tournament-changed")
    assert "approved, proposed by operator-approver" in approver.text(".field-money_terms_history")

    viewer = login("viewer")
    viewer.visit(f"/admin/tournaments/tournament/{tournament.pk}/change/", "tournament")
    assert viewer.page.locator("text=Propose new money terms").count() == 0
    viewer.visit("/admin/tournaments/tournament/", "tournaments")
    assert viewer.page.locator("text=Propose a new tournament").count() == 0


def test_tickets_are_issued_by_finance_from_promotions_approved_by_another_person(login):
    """An operator proposes tickets for two players (an unknown one refused first); another
    person approves; the tickets are active, paid from promotions, and the target's start
    gives an unused one's value back to promotions, not to winnings."""
    from tournaments.models import Ticket, TicketIssue
    from wallets.models import Entry, PlatformAccount
    from wallets.services.accounts import platform_accounts

    client, _ = api_client_create(name="lobby", scopes=["games"])
    target = scheduled(slug="main-100", rebuy=None, min_players=2,
                       prizes=[{"ranks": "1", "percent": "100.00"}])  # fmt: skip
    for p in ("ana", "bo", "cy"):
        funded_player(p, "500.00")
    maker = login("operator")
    maker.visit("/admin/tournaments/ticketissue/add/", "ticket-issue-add")
    maker.page.select_option("#id_tournament", str(target.pk))
    maker.page.fill("#id_players_text", "ana\nbo")
    maker.page.fill("#id_reason", "Diwali promotion")
    late = timezone.localtime(target.registration_closes_at) + timedelta(days=1)
    maker.page.fill("#id_expires_at_0", late.date().isoformat())
    maker.page.fill("#id_expires_at_1", late.strftime("%H:%M:%S"))
    maker.page.click("input[name=_save]")
    assert "at the latest when the tournament's registration closes" in maker.text(".errorlist")
    expiry = timezone.localtime(target.registration_closes_at) - timedelta(minutes=5)
    maker.page.fill("#id_expires_at_0", expiry.date().isoformat())
    maker.page.fill("#id_expires_at_1", expiry.strftime("%H:%M:%S"))
    maker.page.fill("#id_players_text", "ana\nnobody")
    maker.page.click("input[name=_save]")
    assert "no such players: nobody" in maker.text(".errorlist")
    maker.page.fill("#id_players_text", "ana\nbo")
    maker.page.click("input[name=_save]")
    maker.shot("ticket-issue-proposed")
    issue = TicketIssue.objects.get()
    assert issue.expires_at == expiry.replace(microsecond=0)
    assert not Ticket.objects.exists()

    approver = login("approver")
    approver.visit(f"/admin/tournaments/ticketissue/{issue.pk}/change/", "ticket-issue")
    assert "ana, bo" in approver.text()
    with approver.page.expect_navigation(timeout=QUICK_MS):
        approver.page.click("#decision button[value=approve]")
    approver.shot("ticket-issue-approved")
    assert f"#{issue.pk} approved" in approver.messages()
    assert sorted(Ticket.objects.values_list("player__external_id", "status", "source")) == [
        ("ana", "active", "finance"), ("bo", "active", "finance"),
    ]  # fmt: skip
    target.refresh_from_db()
    assert target.tickets_account.balance.amount == Decimal("200.00")

    assert entries.registration_create(client=client, slug="main-100", player="ana").paid == [
        ["ticket", "100.00"]
    ]
    entries.registration_create(client=client, slug="main-100", player="cy")
    rounds.tournament_start(client=client, slug="main-100")
    back = Entry.objects.filter(
        account=platform_accounts()[PlatformAccount.PROMOTIONS],
        transfer__idempotency_key__endswith=":refund",
    )
    assert [e.amount.amount for e in back] == [Decimal("100.00")]  # bo's, to promotions
    assert funded_player("bo", "0")["winnings"].balance.amount == Decimal("0.00")
    assert Ticket.objects.get(player__external_id="bo").status == "refunded"
