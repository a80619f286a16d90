"""Settlement throughput: 6-player points deals settled per second by the Celery path.

1. Baseline, measured in the same run: the ledger's single-transfer rate, N two-leg transfers
   posted one at a time by `wallets.ledger.transfer_post` in a loop (one process).
2. The Celery path: GAMES 6-player points games are opened and their deal stored (not timed);
   then the wake each deal's post sends (`settle_waiting`, one per deal) is sent to 2 real Celery
   worker processes, which claim the stored deals' games (two `--pool solo`
   workers by default; `--pool prefork` runs one worker with 2 children instead, whose parent
   relays every message and costs a third of the throughput), and the clock runs until every
   deal is settled (scored with the engine, standings, the prize, fee and refunds posted).
The figure is deals/s and its ratio to the single-transfer rate. Goals: >= 300/s, ratio >= 0.5.
3. With `--outbox-rounds N`: what the outbox (the settlement's events, rummy_ledger/events)
   costs a settlement, on the wall clock: N rounds, each settling `--games` deals once with the
   product's workers and once with workers that record no events (bench/settlement_worker.py),
   in alternating order; the cost is 1 - with/without per round, and its median. Goal <= 10 %.
Settlement batching (SETTLEMENT_BATCH, default 64 games per transaction, and
SETTLEMENT_RUN_TRANSACTIONS per run) is read by the worker.
The last line is one JSON object with every figure.

Run: `.venv/bin/python bench/settlement.py [--games 3000] [--transfers 3000]` (own database
`bench_settlement` on the embedded server and its own queue on the embedded broker).
"""

import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rummy_ledger.settings")
os.environ.setdefault("EMBEDDED_DATABASE_NAME", "bench_settlement")
os.environ.setdefault("LOG_LEVEL", "WARNING")
QUEUE = f"bench-settlement-{os.getpid()}"
os.environ["CELERY_TASK_DEFAULT_QUEUE"] = QUEUE

from bench.startup import django_start  # noqa: E402

django_start()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from djmoney.money import Money  # noqa: E402

from rummy_ledger.api.keys import api_client_create  # noqa: E402
from rummy_ledger.api.models import ApiClient  # noqa: E402
from rummy_ledger.dev import embedded  # noqa: E402
from tournaments.games.services import intake, opening  # noqa: E402
from tournaments.models import Deal, Game, GameTemplate  # noqa: E402
from tournaments.tasks import settle_waiting  # noqa: E402
from wallets.models import CASH, Account  # noqa: E402
from wallets.services.deposits import deposit_register  # noqa: E402
from wallets.services.transfers import Leg, transfer_post  # noqa: E402

PLAYERS = 600
SEATS = 6
WILD = "KD"
WINNER = [["AS", "2S", "3S"], ["6C", "8C", "KH"], ["4D", "4S", "4C", "4H"], ["JD", "JH", "PJ"]]
LOSER_22 = [["5H", "6H", "7H"], ["9D", "9S", "9C"], ["2C", "2H", "8C", "QD"], ["10S", "10D", "10C"]]
LOSER_50 = [["7S", "8S", "9S"], ["3D", "3H", "3C"], ["QD", "JC", "10H", "8D", "5S", "4S", "3S"]]
OTHERS = [
    ("lost", LOSER_22),
    ("first_drop", None),
    ("middle_drop", None),
    ("lost", LOSER_50),
    ("wrong_show", None),
]


def seed(run: str) -> tuple[ApiClient, list[str]]:
    call_command("migrate", verbosity=0)
    players = [f"bench-s-{n}" for n in range(PLAYERS)]
    for p in players:
        if not Account.objects.filter(code=f"player:{p}:deposit").exists():
            deposit_register(
                player_external_id=p, amount=Money("10000000.00", CASH), reference=f"seed-{p}"
            )
    GameTemplate.objects.get_or_create(
        slug="bench-points-6",
        defaults={
            "format": "points",
            "seats": SEATS,
            "point_value": Decimal("0.10"),
            "fee_percent": Decimal("15"),
        },
    )
    client, _ = api_client_create(name=f"bench-{run}", scopes=["games"])
    return client, players


def single_transfer_rate(players: list[str], n: int, run: str) -> float:
    ids = list(
        Account.objects.filter(code__in=[f"player:{p}:deposit" for p in players]).values_list(
            "pk", flat=True
        )
    )
    rng = random.Random(run)
    one = Money(Decimal("0.01"), CASH)
    started = time.perf_counter()
    for i in range(n):
        a, b = rng.sample(ids, 2)
        transfer_post(
            kind="transfer",
            reference="bench",
            idempotency_key=f"bench-t-{run}-{i}",
            legs=[Leg(a, -one), Leg(b, one)],
        )
    return n / (time.perf_counter() - started)


def games_opened(client: ApiClient, players: list[str], n: int, run: str) -> list[dict]:
    """Open n 6-player points games; their first deal's body (with its `game_id`), not posted."""
    rng = random.Random(run)
    deals = []
    for g in range(n):
        seated = rng.sample(players, SEATS)
        game_id = f"{run}-{g}"
        opening.game_open(
            client=client, game_id=game_id, template_slug="bench-points-6", players=seated
        )
        results = [{"player": seated[0], "outcome": "declared", "groups": WINNER}]
        results += [
            {"player": p, "outcome": o, "groups": g}
            for p, (o, g) in zip(seated[1:], OTHERS, strict=True)
        ]
        deals.append({"game_id": game_id, "deal_no": 1, "wild_joker": WILD, "results": results})
    return deals


def open_games(client: ApiClient, players: list[str], n: int, run: str) -> list[int]:
    deal_ids = []
    for payload in games_opened(client, players, n, run):
        game_id = payload.pop("game_id")
        with mock.patch.object(settle_waiting, "wake"):  # stored now, woken when measured
            deal, _ = intake.deal_store(client=client, game_id=game_id, payload=payload)
        deal_ids.append(deal.pk)
    return deal_ids


def start_workers(pool: str, *, events: bool = True) -> list[subprocess.Popen]:
    """Two worker processes: two `--pool solo` workers (each settles in its own main process), or
    one prefork worker with two children (plus its parent, which relays every message by pipe);
    `events=False`: workers that record no events (bench/settlement_worker.py)."""
    env = {**os.environ, "CELERY_TASK_DEFAULT_QUEUE": QUEUE}
    celery = ["-m", "celery"] if events else [str(ROOT / "bench" / "settlement_worker.py")]
    common = [sys.executable, *celery, "-A", "rummy_ledger", "worker", "-Q", QUEUE,
              "--loglevel", "WARNING", "--without-gossip", "--without-mingle",
              "--without-heartbeat"]  # fmt: skip
    if pool == "solo":
        commands = [[*common, "-n", f"{QUEUE}-{n}@%h", "--pool", "solo"] for n in range(2)]
    else:
        commands = [[*common, "-n", f"{QUEUE}@%h", "--concurrency", "2"]]
    return [
        subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True) for command in commands
    ]


def stop(processes: list[subprocess.Popen]) -> None:
    """SIGTERM each process group started here (`start_new_session`), and wait for them."""
    for process in processes:
        os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        process.wait(timeout=30)


def unsettled(client: ApiClient) -> int:
    """Stored deals of this run's games: one cheap query on the partial index of stored deals
    (the poll must not steal the CPU the workers need)."""
    return Deal.objects.filter(status=Deal.Status.STORED, game__client=client).count()


def wait_settled(client: ApiClient, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while unsettled(client):
        if time.monotonic() > deadline:
            raise SystemExit(f"{unsettled(client)} deals still unsettled after {timeout}s")
        time.sleep(0.1)


def settle_timed(
    client: ApiClient, players: list[str], games: int, run: str, pool: str, events: bool = True
) -> float:
    """Start the workers, warm them up, store `games` deals, and time their settlement (s)."""
    warm = open_games(client, players, 40, f"{run}-warm")
    connection.close()
    workers = start_workers(pool, events=events)
    try:
        # Warm the worker up first, then store the measured deals: a settlement batch takes any
        # stored deal, so none of the measured ones may exist while the warm-up runs.
        for _ in warm:
            settle_waiting.delay()
        wait_settled(client, 60)
        t0 = time.perf_counter()
        deal_ids = open_games(client, players, games, run)
        print(f"opened {games} games, stored their deals in {time.perf_counter() - t0:.1f}s")
        connection.close()
        started = time.perf_counter()
        for _ in deal_ids:
            settle_waiting.delay()
        wait_settled(client, 600)
        return time.perf_counter() - started
    finally:
        stop(workers)


def outbox_cost(client: ApiClient, players: list[str], games: int, run: str, args) -> dict:
    """Rounds with and without the outbox, alternating which goes first; the cost per round."""
    costs = []
    for n in range(args.outbox_rounds):
        rates = {}
        for events in (True, False) if n % 2 == 0 else (False, True):
            tag = f"{run}-o{n}-{int(events)}"
            rates[events] = games / settle_timed(client, players, games, tag, args.pool, events)
        costs.append(1 - rates[True] / rates[False])
        print(
            f"round {n + 1}: with the outbox {rates[True]:,.0f} deals/s, without "
            f"{rates[False]:,.0f} deals/s: it costs {costs[-1]:.1%}"
        )
    median = statistics.median(costs)
    print(f"the outbox costs a settlement {median:.1%} (median of {len(costs)} rounds; goal 10 %)")
    return {"outbox_cost": round(median, 4), "outbox_costs": [round(c, 4) for c in costs]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=3000)
    parser.add_argument("--transfers", type=int, default=3000)
    parser.add_argument("--pool", choices=["solo", "prefork"], default="solo")
    parser.add_argument("--outbox-rounds", type=int, default=0)
    args = parser.parse_args()
    if embedded.redis_url(settings.DATA_DIR) == settings.CELERY_BROKER_URL:
        embedded.ensure_redis(settings.DATA_DIR)
    run = f"r{time.time_ns()}"
    client, players = seed(run)

    single = single_transfer_rate(players, args.transfers, run)
    print(f"ledger single transfers (transfer_post in a loop): {single:,.0f}/s (baseline)")

    elapsed = settle_timed(client, players, args.games, run, args.pool)
    rate = args.games / elapsed
    ratio = rate / single
    finished = (
        Game.objects.filter(client=client, status=Game.Status.FINISHED)
        .filter(game_id__startswith=f"{run}-")
        .exclude(game_id__startswith=f"{run}-warm-")
        .count()
    )
    print(
        f"settled {args.games} 6-player points deals in {elapsed:.2f}s with 2 worker processes "
        f"({args.pool}): "
        f"{rate:,.0f} deals/s (goal 300) = {ratio:.2f} x single transfers (goal 0.5)"
    )
    figures = {
        "deals": args.games, "workers": 2, "pool": args.pool, "seconds": round(elapsed, 3),
        "deals_per_s": round(rate, 1), "single_transfer_per_s": round(single, 1),
        "ratio": round(ratio, 3), "goal_deals_per_s": 300, "goal_ratio": 0.5,
        "games_finished": finished, "transfers_measured": args.transfers,
        "players": PLAYERS, "settlement_batch": settings.SETTLEMENT_BATCH,
    }  # fmt: skip
    if args.outbox_rounds:
        figures |= outbox_cost(client, players, args.games, run, args)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
