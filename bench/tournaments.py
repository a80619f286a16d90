"""Tournaments: registrations into ONE tournament against deposits, and a big tournament from
registration to settled prizes. In its own database `bench_tournaments` (dropped, recreated).

1. Registrations/s into one tournament by THREADS clients (threads with their own database
   connection calling the registration service, as the API view does), as a ratio to deposits/s
   by as many clients in the same run (goal >= 0.5x: registrations must not queue on one row).
2. A PLAYERS-player tournament (tables of 6, each table's winner goes on, PAID ranks paid) from
   registration to settled prizes, each phase timed: registration (THREADS clients), the start,
   each round posted and settled, the final posted and the payout (the final's settlement: ranks,
   prizes, one ledger call); the payout's entries/s as a ratio to the ledger's batch rate (one
   `transfers_post` of as many two-leg transfers, in the same run).

Run: `.venv/bin/python bench/tournaments.py [--players 10000] [--paid 2500] [--threads 8]
[--each 100]` (RUMMY_EMBEDDED=1, or DATABASE_URL's server). The last line is one JSON object.
The machine is shared: the figures are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from datetime import timedelta
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["BENCH_DATABASE"] = "bench_tournaments"

# isort: off
from bench.reconcile import recreate_database  # noqa: E402  (sets Django up: first)

# isort: on
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402
from djmoney.money import Money  # noqa: E402

from rummy_ledger.api.keys import api_client_create  # noqa: E402
from rummy_ledger.celery import app as celery_app  # noqa: E402
from tests.builders import deposit_for_credit  # noqa: E402
from tournaments.models import Tournament  # noqa: E402
from tournaments.references import tournament_reference  # noqa: E402
from tournaments.tournaments.services import (  # noqa: E402
    entries,
    rounds,
)
from tournaments.tournaments.services.setup import (  # noqa: E402
    tournament_create,
    tournament_fields_checked,
)
from wallets.models import CASH, Account, Entry, Transfer  # noqa: E402
from wallets.services.accounts import platform_accounts  # noqa: E402
from wallets.services.deposits import deposit_register  # noqa: E402
from wallets.services.players import players_get_or_create  # noqa: E402
from wallets.services.transfers import Leg, TransferRequest, transfers_post  # noqa: E402
from wallets.tax.gst_rates import gst_rate_now  # noqa: E402

GOAL_REGISTRATIONS = 0.5


def knockout_rounds(players: int) -> int:
    """Rounds before the final when each table of 6 sends its winner on."""
    n = 0
    while players > 6:
        players = -(-players // 6)
        n += 1
    return n


def schedule(slug: str, players: int, paid: int) -> Tournament:
    per_rank = Decimal(100) / paid
    each = per_rank.quantize(Decimal("0.01"), rounding="ROUND_FLOOR")
    first = Decimal(100) - each * (paid - 1)
    prizes = [{"ranks": "1", "percent": f"{first:.2f}"}]
    if paid > 1:
        prizes.append({"ranks": f"2-{paid}", "percent": f"{each:.2f}"})
    return tournament_create(
        spec=tournament_fields_checked(
            {
                "slug": slug, "name": slug, "client": "bench-lobby", "currency": "INR",
                "entry_fee": "100.00", "fee_percent": "15.00", "guarantee": "0.00",
                "min_players": max(paid, 2), "max_players": players, "table_size": 6,
                "registration_closes_at": (timezone.now() + timedelta(hours=2)).isoformat(),
                "rounds": [{"qualify_top": 1}] * knockout_rounds(players) + [{"final": True}],
                "rebuy": None, "prizes": prizes,
            }
        ),
        created_by="bench",
    )  # fmt: skip


def fund(names: list[str], threads: int = 1) -> None:
    """A deposit for each player (the real path, GST taken), by `threads` clients."""
    amount = Money(deposit_for_credit(Decimal("200.00"), rate_percent=gst_rate_now()), CASH)
    per = len(names) // threads + 1

    def deposits(t):
        for name in names[t * per : (t + 1) * per]:
            deposit_register(player_external_id=name, amount=amount, reference=f"fund-{name}")

    if threads == 1:
        deposits(0)
    else:
        parallel(threads, deposits)


def parallel(threads: int, work) -> float:
    """Run work(thread_no) in `threads` threads released together; the seconds they took."""
    gate = threading.Barrier(threads + 1)

    def run(n):
        gate.wait()
        try:
            work(n)
        finally:
            connection.close()

    pool = [threading.Thread(target=run, args=(n,)) for n in range(threads)]
    for t in pool:
        t.start()
    gate.wait()
    started = time.perf_counter()
    for t in pool:
        t.join()
    return time.perf_counter() - started


def registrations_vs_deposits(client, threads: int, each: int) -> dict:
    n = threads * each
    schedule("bench-one", n, 2)
    names = [f"reg-{i}" for i in range(n)]
    players_get_or_create(external_ids=names)
    fund(names, threads)
    depositors = [f"dep-{i}" for i in range(n)]
    players_get_or_create(external_ids=depositors)
    amount = Money(deposit_for_credit(Decimal("100.00"), rate_percent=gst_rate_now()), CASH)

    def deposits(t):
        for i in range(t * each, (t + 1) * each):
            deposit_register(
                player_external_id=depositors[i], amount=amount, reference=f"bench-dep-{i}"
            )

    def registrations(t):
        for i in range(t * each, (t + 1) * each):
            entries.registration_create(client=client, slug="bench-one", player=names[i])

    deposit_s = parallel(threads, deposits)
    register_s = parallel(threads, registrations)
    assert entries.players_count(Tournament.objects.get(slug="bench-one")) == n
    return {
        "deposits_per_s": round(n / deposit_s, 1),
        "registrations_per_s": round(n / register_s, 1),
        "ratio": round(deposit_s / register_s, 2),
    }


def standings(players: list[str], size: int) -> list[dict]:
    tables = []
    for t in range(0, len(players), size):
        seated = players[t : t + size]
        tables.append(
            {
                "table": f"t{t // size}",
                "standings": [
                    {"player": p, "position": n, "chips": 10_000 - n * 7 - t % 997}
                    for n, p in enumerate(seated, start=1)
                ],
            }
        )
    return tables


class SettleTimer:
    """The seconds `round_settle` (what the Celery task runs, here eagerly at the round's commit)
    took for each round, so a round's posting and its settlement are timed apart."""

    def __init__(self):
        self.seconds: dict[int, float] = {}
        self.settle = rounds.round_settle

    def __call__(self, *, round_id: int) -> bool:
        started = time.perf_counter()
        try:
            return self.settle(round_id=round_id)
        finally:
            self.seconds[round_id] = time.perf_counter() - started


class Phases(dict):
    """Each phase's seconds, printed as it ends (a long run shows its progress)."""

    def __setitem__(self, phase: str, seconds: float) -> None:
        print(f"  {phase}: {seconds:.3f} s", flush=True)
        super().__setitem__(phase, seconds)


def big_tournament(client, players: int, paid: int, threads: int) -> dict:
    phases = Phases()
    started = time.perf_counter()
    schedule("bench-big", players, paid)
    phases["schedule"] = time.perf_counter() - started
    names = [f"big-{i}" for i in range(players)]
    players_get_or_create(external_ids=names)
    fund(names, threads)
    per = players // threads + 1

    def register(t):
        for name in names[t * per : (t + 1) * per]:
            entries.registration_create(client=client, slug="bench-big", player=name)

    phases["register"] = parallel(threads, register)
    started = time.perf_counter()
    rounds.tournament_start(client=client, slug="bench-big")
    phases["start"] = time.perf_counter() - started
    timer = rounds.round_settle = SettleTimer()  # the task calls the module's round_settle
    alive = names
    final = knockout_rounds(players) + 1
    for number in range(1, final + 1):
        tables = standings(alive, 6)
        started = time.perf_counter()
        stored = rounds.round_store(client=client, slug="bench-big", number=number, tables=tables)
        settled = timer.seconds[stored.pk]
        name = "final" if number == final else f"round {number}"
        phases[f"{name} posted"] = time.perf_counter() - started - settled
        phases["payout" if number == final else f"{name} settled"] = settled
        alive = [t["standings"][0]["player"] for t in tables]
    rounds.round_settle = timer.settle
    tournament = Tournament.objects.get(slug="bench-big")
    assert tournament.status == Tournament.Status.FINISHED
    legs = Entry.objects.filter(
        transfer__kind=Transfer.Kind.SETTLEMENT,
        transfer__reference=tournament_reference(tournament.pk),
    ).count()
    return {"phases_s": {k: round(v, 3) for k, v in phases.items()}, "payout_entries": legs}


def ledger_batch_rate(n: int) -> float:
    """Entries/s of one `transfers_post` of n two-leg transfers (the ledger's batch path)."""
    promotions = platform_accounts()["promotions"].pk
    names = [f"batch-{i}" for i in range(n)]
    players = players_get_or_create(external_ids=names)
    accounts = dict(
        Account.objects.filter(player__in=players.values(), bucket="winnings").values_list(
            "player__external_id", "pk"
        )
    )
    requests = [
        TransferRequest(
            kind=Transfer.Kind.TRANSFER,
            reference=f"bench-batch-{i}",
            idempotency_key=f"bench-batch-{i}",
            legs=[Leg(promotions, -Money("1.00", CASH)), Leg(accounts[name], Money("1.00", CASH))],
        )
        for i, name in enumerate(names)
    ]
    started = time.perf_counter()
    transfers_post(requests=requests)
    return 2 * n / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--paid", type=int, default=2_500)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--each", type=int, default=100)
    args = parser.parse_args()
    celery_app.conf.task_always_eager = True  # no broker needed: tasks run at the commit
    recreate_database()
    call_command("migrate", verbosity=0)
    client, _ = api_client_create(name="bench-lobby", scopes=["games"])
    out = {"registrations": registrations_vs_deposits(client, args.threads, args.each)}
    print(f"registrations vs deposits ({args.threads} clients): {out['registrations']}", flush=True)
    print(f"a {args.players}-player tournament, {args.paid} paid ranks:", flush=True)
    big = big_tournament(client, args.players, args.paid, args.threads)
    payout_rate = big["payout_entries"] / big["phases_s"]["payout"]
    batch_rate = ledger_batch_rate(big["payout_entries"] // 2)
    big["payout_entries_per_s"] = round(payout_rate, 1)
    big["ledger_batch_entries_per_s"] = round(batch_rate, 1)
    big["payout_ratio"] = round(payout_rate / batch_rate, 3)
    out["big"] = big
    print(
        f"payout: {big['payout_entries']} entries, {payout_rate:.0f}/s; ledger batch "
        f"{batch_rate:.0f}/s; ratio {big['payout_ratio']}"
    )
    out["goal_registrations_met"] = out["registrations"]["ratio"] >= GOAL_REGISTRATIONS
    print(json.dumps(out))


if __name__ == "__main__":
    main()
