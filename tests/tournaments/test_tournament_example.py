"""docs/tournaments.md: its example file scheduled by `manage.py create_tournament`, its worked
example (₹100, 37 players, ₹5,000 guarantee, 15 % fee, two tied at 7th) played through the
services, and every figure the page shows is what the code gives."""

import json
import re
from datetime import timedelta
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from rummy_ledger.api.keys import api_client_create
from tests.builders import funded_player
from tournaments.models import Registration, Tournament
from tournaments.tournaments.services import entries, rounds

pytestmark = pytest.mark.django_db
DOC = Path(__file__).resolve().parents[2] / "docs" / "tournaments.md"
README = DOC.parents[1] / "README.md"


def doc_file(tmp_path, **overrides) -> Path:
    data = json.loads(re.search(r"```json\n(.*?)```", DOC.read_text(), re.S).group(1))
    data["registration_closes_at"] = (timezone.now() + timedelta(hours=2)).isoformat()
    data.update(overrides)
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    return path


def rupees(amount) -> str:
    return f"₹{amount:,.2f}"


def standings(name: str, players: list[str], chips: list[int]) -> dict:
    return {
        "table": name,
        "standings": [
            {"player": p, "position": n, "chips": c}
            for n, (p, c) in enumerate(zip(players, chips, strict=True), start=1)
        ],
    }


def test_the_command_schedules_the_doc_file_and_refuses_like_the_admin(tmp_path):
    client, _ = api_client_create(name="lobby", scopes=["games"])
    out = StringIO()
    call_command("create_tournament", str(doc_file(tmp_path, rebuy=None)), by="ops1", stdout=out)
    assert out.getvalue().splitlines()[-1] == "sunday-100"
    tournament = Tournament.objects.get()
    assert (tournament.client, tournament.created_by) == (client, "shell:ops1")
    assert tournament.seats.count() == 60 and tournament.prizes.count() == 9
    bad = doc_file(tmp_path, slug="other", min_players=8)
    with pytest.raises(CommandError, match="may pay no more ranks than min_players"):
        call_command("create_tournament", str(bad), stdout=StringIO())
    chips_fee = doc_file(tmp_path, slug="chips", currency="CHP")
    with pytest.raises(CommandError, match="a chips tournament's fee is 0"):
        call_command("create_tournament", str(chips_fee), stdout=StringIO())
    with pytest.raises(CommandError, match="exists already"):
        call_command("create_tournament", str(doc_file(tmp_path)), stdout=StringIO())
    assert Tournament.objects.count() == 1


def test_the_worked_example(tmp_path):
    client, _ = api_client_create(name="lobby", scopes=["games"])
    call_command("create_tournament", str(doc_file(tmp_path, rebuy=None)), stdout=StringIO())
    players = [f"p{n:02d}" for n in range(1, 38)]
    for p in players:
        funded_player(p, "100.00")
        entries.registration_create(client=client, slug="sunday-100", player=p)
    rounds.tournament_start(client=client, slug="sunday-100")
    # round 1: tables of 6, 6, 5, 5, 5, 5, 5; the first two of each go on (14)
    sizes, tables, at = [6, 6, 5, 5, 5, 5, 5], [], 0
    for t, size in enumerate(sizes):
        seated = players[at : at + size]
        tables.append(standings(f"r1t{t}", seated, [1000 - 10 * i - t for i in range(size)]))
        at += size
    rounds.round_store(client=client, slug="sunday-100", number=1, tables=tables)
    second = [p for t in tables for p in (t["standings"][0]["player"], t["standings"][1]["player"])]
    # round 2: tables of 5, 5, 4; the third of the first two tables tie on 900 chips (7th)
    chips = [[3000, 2000, 900, 500, 100], [2500, 1800, 900, 400, 50], [2200, 1500, 300, 200]]
    groups = [second[0:5], second[5:10], second[10:14]]
    r2 = [standings(f"r2t{i}", g, c) for i, (g, c) in enumerate(zip(groups, chips, strict=True))]
    stored = rounds.round_store(client=client, slug="sunday-100", number=2, tables=r2)
    rounds.round_settle(round_id=stored.pk)
    finalists = [g[0] for g in groups] + [g[1] for g in groups]
    final = rounds.round_store(
        client=client,
        slug="sunday-100",
        number=3,
        tables=[standings("final", finalists, [0] * 6)],
    )
    rounds.round_settle(round_id=final.pk)
    tournament = Tournament.objects.get()
    by_rank: dict[int, list] = {}
    for r in Registration.objects.filter(tournament=tournament, status="registered"):
        by_rank.setdefault(r.rank, []).append(r.prize)
    tied = by_rank.pop(7)
    assert len(tied) == 2 and len(set(tied)) == 1
    assert all(p == 0 for rank, prizes in by_rank.items() if rank > 10 for p in prizes)
    total = sum(p for prizes in by_rank.values() for p in prizes) + sum(tied)
    for doc in (DOC.read_text(), README.read_text()):  # the README shows the same example
        for label, amount in [
            ("collected", tournament.collected),
            ("fee (15 %)", tournament.fee),
            ("collected \N{MINUS SIGN} fee", tournament.collected - tournament.fee),
            ("prize pool (the guarantee)", tournament.prizes_paid),
            ("overlay (from promotions)", tournament.overlay),
        ]:
            assert re.search(rf"\| {re.escape(label)} \|.*{re.escape(rupees(amount))} \|", doc), (
                label
            )
        tie = "| 7 (two tied: ranks 7\N{EN DASH}8, ₹275.00 + ₹225.00 shared) |"
        assert f"{tie} {rupees(tied[0])} each |" in doc
        for rank in range(1, 7):
            assert f"| {rank} | {rupees(by_rank[rank][0])} |" in doc
        assert (
            f"| 9 | {rupees(by_rank[9][0])} |" in doc
            and f"| 10 | {rupees(by_rank[10][0])} |" in doc
        )
        line = (
            f"Prizes {rupees(total)} + fee {rupees(tournament.fee)} = collected "
            f"{rupees(tournament.collected)} + overlay {rupees(tournament.overlay)} = "
            f"{rupees(total + tournament.fee)}."
        )
        assert line in doc
