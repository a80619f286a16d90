"""The tournaments' finance admin, through the admin's own views (the browser tests click the same
pages): the tournament P&L from the ledger, and the forms that propose new money terms and a
new tournament, refused with `create_tournament`'s messages and decided by someone else."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from html import unescape

import pytest
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from rummy_ledger.api.keys import api_client_create
from tests.builders import funded_player, staff_client
from tests.tournaments.tournament_builders import pnl_books, scheduled, tournament_file
from tournaments.errors import TermsInvalid
from tournaments.models import NewTournament, Tournament, TournamentChange
from tournaments.tournaments.services.entries import registration_create
from tournaments.tournaments.services.setup import tournament_fields_checked
from wallets.models import Entry, Transfer
from wallets.months import Month
from wallets.services.partitions import entry_partition_ensure

PNL = "admin:tournaments_tournament_pnl"
D = Decimal


@pytest.fixture
def lobby(db):
    return api_client_create(name="lobby", scopes=["games"])[0]


def amounts(row) -> tuple:
    return tuple(row[c] for c in ("entries", "rebuys", "fee", "overlay", "prizes", "refunds"))


def test_pnl_by_day_and_month_from_the_ledger(viewer, lobby):
    # given three tournaments, and the cancelled one's transfers moved 40 days back
    pnl_books(lobby)
    cancelled = f"tournament:{Tournament.objects.get(slug='monday-50').pk}"
    moved = timezone.now() - timedelta(days=40)
    entry_partition_ensure(Month.of(moved))  # that month's entries need their partition
    with connection.cursor() as cursor:  # past the append-only triggers, for this test only
        cursor.execute("SET LOCAL session_replication_role = replica")
        ids = list(Transfer.objects.filter(reference=cancelled).values_list("pk", flat=True))
        Transfer.objects.filter(pk__in=ids).update(created_at=moved)
        Entry.objects.filter(transfer_id__in=ids).update(created_at=moved)
        cursor.execute("SET LOCAL session_replication_role = origin")
    today = timezone.localdate()
    then = timezone.localtime(moved).date()
    client = staff_client(viewer)

    # when
    by_day = client.get(reverse(PNL), {"start": today - timedelta(days=1), "end": today})
    by_month = client.get(reverse(PNL), {"start": then, "end": today, "by": "month"})

    # then: today's rows, one per currency, never added together
    rows = {(r["period"], r["currency"]): r for r in by_day.context["rows"]}
    assert set(rows) == {(today, "CHP"), (today, "INR")}
    inr, chp = rows[(today, "INR")], rows[(today, "CHP")]
    assert amounts(inr) == (D(500), D(50), D("67.50"), D("117.50"), D(500), D(100))
    assert inr["net"] == D("-50.00")
    assert amounts(chp) == (0, 0, 0, D(1000), D(1000), 0)
    html = by_day.content.decode()
    assert '<svg id="pnl-chart"' in html and html.count("<rect") == 2  # cash fee and overlay
    assert "₹67.50" in html and "1,000 chips" in html
    # by month: the cancelled tournament's refund in its own month, totals per currency
    months = {(r["period"], r["currency"]): amounts(r) for r in by_month.context["rows"]}
    assert months[(then.replace(day=1), "INR")] == (D(100), 0, 0, 0, 0, D(100))
    totals = {t["currency"]: t for t in by_month.context["totals"]}
    assert amounts(totals["INR"]) == (D(600), D(50), D("67.50"), D("117.50"), D(500), D(200))
    assert "CHP" in totals and set(totals) == {"CHP", "INR"}
    csv = client.get(reverse(PNL), {"start": today, "end": today, "format": "csv"})
    lines = csv.content.decode("utf-8-sig").splitlines()
    assert lines[0].startswith("day,currency,entries (in the row's currency)")
    assert f"{today},INR,500.00,50.00,67.50,117.50,500.00,100.00,-50.00" in lines


@pytest.mark.parametrize(
    "query, error",
    [
        ({"start": "2026-11-30", "end": "2026-11-01"}, "The end comes before the start."),
        ({"start": "yesterday", "end": "2026-11-01"}, "Enter a valid date."),
        ({"start": "2026-11-01", "end": "9999-12-31"}, "less than or equal to"),
        ({"by": "year"}, "Select a valid choice."),
    ],
)
def test_pnl_refuses_bad_input_on_its_form(viewer, query, error):
    page = staff_client(viewer).get(reverse(PNL), query)
    assert page.status_code == 200 and page.context["rows"] is None
    assert error in page.content.decode()


def terms_post(tournament, **boxes) -> dict:
    data = {
        "tournament": tournament.pk,
        "entry_fee": "200.00",
        "fee_percent": "12.50",
        "guarantee": "1000.00",
        "rebuy_price": "",
        "rebuy_max_per_player": "",
        "rebuy_until_round": "",
        "prizes": "1 60.00\n2-3 20.00",
        "reason": "bigger Sunday",
    }
    return {**data, **boxes}


def test_money_terms_proposed_on_the_form_and_approved_by_another(operator, approver, lobby):
    tournament = scheduled()
    add = reverse("admin:tournaments_tournamentchange_add")
    form = staff_client(operator).get(add, {"tournament": tournament.pk}).context["adminform"].form
    assert form.initial["prizes"] == "1 50.00\n2-3 25.00"  # starts from the terms in force
    assert form.initial["rebuy_max_per_player"] == "2"

    page = staff_client(operator).post(add, terms_post(tournament))

    assert page.status_code == 302
    change = TournamentChange.objects.get()
    tournament.refresh_from_db()
    assert tournament.entry_fee == D("100.00")  # nothing until approved
    decide = reverse("admin:tournaments_tournamentchange_decide", args=[change.pk])
    staff_client(operator).post(decide, {"decision": "approve"})  # the maker: refused
    assert TournamentChange.objects.get().status == "proposed"
    staff_client(approver).post(decide, {"decision": "approve"})
    tournament.refresh_from_db()
    assert (tournament.entry_fee, tournament.fee_percent, tournament.rebuy) == (
        D("200.00"), D("12.50"), None,
    )  # fmt: skip
    assert [(p.rank_from, p.rank_to, p.percent) for p in tournament.prizes.all()] == [
        (1, 1, D("60.00")),
        (2, 3, D("20.00")),
    ]
    page_of = reverse("admin:tournaments_tournament_change", args=[tournament.pk])
    shown = staff_client(approver).get(page_of)
    assert "entry fee: ₹100.00 → ₹200.00" in shown.content.decode()


def message_of(data: dict) -> str:
    """What `manage.py create_tournament` says of these fields."""
    with pytest.raises(TermsInvalid) as refused:
        tournament_fields_checked(data)
    return refused.value.message


@pytest.mark.parametrize(
    "boxes, file",
    [
        ({"prizes": "1 60.00\n2-3 10.00"}, {"prizes": [{"ranks": "1", "percent": "60.00"},
                                                       {"ranks": "2-3", "percent": "10.00"}]}),
        ({"entry_fee": "1.005"}, {"entry_fee": "1.005"}),
        ({"rebuy_price": "50.00", "rebuy_max_per_player": "2", "rebuy_until_round": "2"},
         {"rebuy": {"price": "50.00", "max_per_player": 2, "until_round": 2}}),
        ({"prizes": "1 50.00\n2-5 12.50"}, {"prizes": [{"ranks": "1", "percent": "50.00"},
                                                       {"ranks": "2-5", "percent": "12.50"}]}),
    ],
)  # fmt: skip
def test_money_terms_refused_with_the_schedulers_messages(operator, lobby, boxes, file):
    tournament = scheduled()
    page = staff_client(operator).post(
        reverse("admin:tournaments_tournamentchange_add"), terms_post(tournament, **boxes)
    )
    assert page.status_code == 200
    assert message_of(tournament_file(**file)) in unescape(page.content.decode())
    assert not TournamentChange.objects.exists()


def test_no_new_money_terms_once_anyone_registered(operator, lobby):
    tournament = scheduled()
    funded_player("ana", "500.00")
    registration_create(client=lobby, slug=tournament.slug, player="ana")
    page_of = reverse("admin:tournaments_tournament_change", args=[tournament.pk])
    assert b"Propose new money terms" not in staff_client(operator).get(page_of).content

    page = staff_client(operator).post(
        reverse("admin:tournaments_tournamentchange_add"), terms_post(tournament)
    )
    assert "players have registered for sunday-100" in page.content.decode()
    assert not TournamentChange.objects.exists()


def new_post(**fields) -> dict:
    closes = timezone.localtime() + timedelta(days=1)
    data = {
        "slug": "friday-250",
        "name": "Friday 250",
        "client": "lobby",
        "currency": "INR",
        "entry_fee": "250.00",
        "fee_percent": "15.00",
        "guarantee": "5000.00",
        "rebuy_price": "100.00",
        "rebuy_max_per_player": "1",
        "rebuy_until_round": "1",
        "prizes": "1 50.00\n2-3 25.00",
        "min_players": "4",
        "max_players": "60",
        "table_size": "6",
        "registration_closes_at_0": closes.date().isoformat(),
        "registration_closes_at_1": closes.strftime("%H:%M:%S"),
        "bonus_cap_percent": "10.00",
        "rounds": "qualify_top 2\nfinal",
        "reason": "Friday series",
    }
    return {**data, **fields}


def test_a_new_tournament_is_created_when_another_person_approves(operator, approver, lobby):
    add = reverse("admin:tournaments_newtournament_add")
    page = staff_client(operator).post(add, new_post())
    assert page.status_code == 302
    proposal = NewTournament.objects.get()
    assert not Tournament.objects.exists()  # nothing until approved

    decide = reverse("admin:tournaments_newtournament_decide", args=[proposal.pk])
    staff_client(approver).post(decide, {"decision": "approve"})

    t = Tournament.objects.get()
    assert (t.slug, t.client, t.entry_fee, t.guarantee, t.max_players) == (
        "friday-250", lobby, D("250.00"), D("5000.00"), 60,
    )  # fmt: skip
    assert t.rounds == [{"qualify_top": 2}, {"final": True}]
    assert t.rebuy == {"price": "100.00", "max_per_player": 1, "until_round": 1}
    assert t.created_by == "admin: new tournament #1 friday-250, proposed by operator".replace(
        "#1", f"#{proposal.pk}"
    )
    assert NewTournament.objects.get().tournament == t


@pytest.mark.parametrize(
    "fields, file",
    [
        ({"rounds": "qualify_top 6\nfinal"}, {"rounds": [{"qualify_top": 6}, {"final": True}]}),
        ({"rounds": "top 2\nfinal"}, {"rounds": [{"top": 2}, {"final": True}]}),
        ({"currency": "CHP"}, {"currency": "CHP"}),  # a fee on chips
        ({"table_size": "7"}, {"table_size": 7}),
        ({"max_players": "lots"}, {"max_players": "lots"}),
        ({"slug": "Friday 250"}, {"slug": "Friday 250"}),
        ({"prizes": "1 50.00\n2-5 12.50"}, {"prizes": [{"ranks": "1", "percent": "50.00"},
                                                       {"ranks": "2-5", "percent": "12.50"}]}),
    ],
)  # fmt: skip
def test_a_new_tournament_is_refused_with_the_schedulers_messages(operator, lobby, fields, file):
    page = staff_client(operator).post(
        reverse("admin:tournaments_newtournament_add"), new_post(**fields)
    )
    assert page.status_code == 200
    file = tournament_file(**{"slug": "friday-250", **file})
    assert message_of(file) in unescape(page.content.decode())
    assert not NewTournament.objects.exists()


def test_a_new_tournament_whose_slug_was_taken_meanwhile_is_not_approved(operator, approver, lobby):
    staff_client(operator).post(reverse("admin:tournaments_newtournament_add"), new_post())
    scheduled(slug="friday-250")
    proposal = NewTournament.objects.get()
    decide = reverse("admin:tournaments_newtournament_decide", args=[proposal.pk])
    page = staff_client(approver).post(decide, {"decision": "approve"}, follow=True)
    assert "slug: a tournament &#x27;friday-250&#x27; exists already" in page.content.decode()
    assert NewTournament.objects.get().status == "proposed"
    assert Tournament.objects.count() == 1
