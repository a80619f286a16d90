"""The HTTP hot paths (`tournaments/games/services/opening.py`,
`tournaments/games/services/intake.py`): game
opens and deal posts against an authenticated trivial GET, `--clients` clients against `manage.py
serve` (real gunicorn, two Celery workers, beat), on the same stack as `bench/faults.py` (its own
embedded PostgreSQL and Redis under /tmp, or the machine's servers with DATABASE_URL and
CELERY_BROKER_URL set).

Three timed phases of `--seconds` each, one operation per phase, every client in a loop:
1. `GET /api/v1/templates` (the baseline);
2. `POST /api/v1/games` (4-player points games, players drawn from 2,000 funded ones);
3. `POST /api/v1/games/{id}/deals`, one deal for each game phase 2 opened (a phase that runs
   out of games ends early; its rate is over the time it ran; games it had no time for stay
   open without a deal, counted as `games_opened_without_deal`).
Printed: each rate and its ratio to the GET (goal >= 0.5 for both), p50/p99 latency (goal: deal
ingest p99 < 100 ms), and the settlement lag of the posted deals, stored to settled by the
database's clock (goal p99 < 2 s); then the checks of `bench/faults.py` (every acknowledged
deal stored once and settled once, no game stuck, reconcile clean). The last line is one JSON
object. (Named hot_path.py, not http.py: a script's folder comes first on sys.path, and a
`http.py` there would hide the standard library's `http` package from urllib.)

Run: `.venv/bin/python bench/hot_path.py [--clients 8] [--seconds 15] [--web-workers 3]`
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import threading
import time
import uuid

from django.conf import settings
from django.db import connection
from faults import (  # the same stack, seed, client and checks as the fault run
    SEATS,
    SYSTEM,
    TEMPLATE,
    Client,
    Stack,
    Tally,
    broker_kind,
    check,
    get_rate,
    percentile,
    seed,
    settlement_lags,
    wait_settled,
)

from rummy_ledger.dev import embedded
from rummy_ledger.dev.demo.simulator import Simulator


def phase(clients: int, seconds: float, work) -> float:
    """Run `work(n, client_stop)` in `clients` threads for `seconds`; the elapsed time."""
    stop = threading.Event()
    threads = [threading.Thread(target=work, args=(n, stop)) for n in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(t.is_alive() for t in threads):
        time.sleep(0.05)
    stop.set()
    for thread in threads:
        thread.join(timeout=120)
    return time.perf_counter() - started


def opens(base: str, key: str, players: list[str], args, run: str) -> tuple[float, Tally, list]:
    tally = Tally()
    opened: list[list] = [[] for _ in range(args.clients)]  # per client: (game id, seated)

    def work(n: int, stop: threading.Event) -> None:
        client, rng = Client(base, key, tally), random.Random(f"{run}-{n}")
        while not stop.is_set():
            game_id, seated = f"{run}-{n}-{len(opened[n]) + 1}", rng.sample(players, SEATS)
            body = {"game_id": game_id, "template": TEMPLATE, "players": seated}
            client.call("open", "POST", "games", body)
            opened[n].append((game_id, seated))

    elapsed = phase(args.clients, args.seconds, work)
    return len(tally.latency["open"]) / elapsed, tally, opened


def deals(base: str, key: str, opened: list, args) -> tuple[float, Tally]:
    tally = Tally()
    templates = Client(base, key, tally).call("get", "GET", "templates")["templates"]
    rules = next(t for t in templates if t["slug"] == TEMPLATE)
    sim = Simulator(None, [], seed=7)  # only its hand builder: seats 0..3, named at play
    bodies = [sim._deal13(rules, list(range(SEATS)), 1) for _ in range(64)]

    def work(n: int, stop: threading.Event) -> None:
        client, rng = Client(base, key, tally), random.Random(n)
        for game_id, seated in opened[n]:
            if stop.is_set():
                return
            body = json.loads(json.dumps(rng.choice(bodies)))  # a private copy
            for result in body["results"]:
                result["player"] = seated[result["player"]]
            client.call("deal", "POST", f"games/{game_id}/deals", body)
            with tally.lock:
                tally.acked.append((game_id, time.monotonic()))

    elapsed = phase(args.clients, args.seconds, work)
    return len(tally.latency["deal"]) / elapsed, tally


def ms(values: list[float], p: float) -> float:
    return round(percentile(values, p) * 1000, 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--web-workers", type=int, default=3)
    args = parser.parse_args()
    stack = Stack(args.web_workers)
    figures: dict = {"clients": args.clients, "web_workers": args.web_workers,
                     "celery_workers": 2, "broker": broker_kind(),
                     "database": "postgresql-15" if SYSTEM else "embedded"}  # fmt: skip
    try:
        key, players = seed()
        base = f"http://127.0.0.1:{stack.port}"
        get_per_s, get_tally = get_rate([base], key, args.clients, args.seconds)
        run = f"h{uuid.uuid4().hex[:6]}"
        opens_per_s, open_tally, opened = opens(base, key, players, args, run)
        deals_per_s, deal_tally = deals(base, key, opened, args)
        acked = [g for g, _ in deal_tally.acked]
        wait_settled(run, acked, 120)
        lags = settlement_lags(run)
        get_ms, open_ms, deal_ms = (
            get_tally.latency["get"],
            open_tally.latency["open"],
            deal_tally.latency["deal"],
        )
        figures |= {
            "get_per_s": round(get_per_s, 1),
            "opens_per_s": round(opens_per_s, 1),
            "deal_posts_per_s": round(deals_per_s, 1),
            "open_ratio_to_get": round(opens_per_s / get_per_s, 3),
            "deal_ratio_to_get": round(deals_per_s / get_per_s, 3),
            "get_p50_ms": ms(get_ms, 50),
            "get_p99_ms": ms(get_ms, 99),
            "open_p50_ms": ms(open_ms, 50),
            "open_p99_ms": ms(open_ms, 99),
            "ingest_p50_ms": ms(deal_ms, 50),
            "ingest_p99_ms": ms(deal_ms, 99),
            "settlement_lag_p50_s": round(percentile(lags, 50), 3),
            "settlement_lag_p99_s": round(percentile(lags, 99), 3),
            "bad_answers": (get_tally.bad + open_tally.bad + deal_tally.bad)[:10],
        }
        print(
            f"{args.clients} clients: GET /templates {get_per_s:,.0f}/s (p99 "
            f"{figures['get_p99_ms']} ms); game opens {opens_per_s:,.0f}/s = "
            f"{figures['open_ratio_to_get']} x GET (goal 0.5), p50 {figures['open_p50_ms']} ms, "
            f"p99 {figures['open_p99_ms']} ms; deal posts {deals_per_s:,.0f}/s = "
            f"{figures['deal_ratio_to_get']} x GET (goal 0.5), p50 {figures['ingest_p50_ms']} "
            f"ms, p99 {figures['ingest_p99_ms']} ms (goal < 100); settlement lag p50 "
            f"{figures['settlement_lag_p50_s']} s, p99 {figures['settlement_lag_p99_s']} s "
            "(goal < 2)",
            flush=True,
        )
        figures["check"] = check(run, acked)
    finally:
        stack.stop()
        connection.close()
        if not SYSTEM:
            embedded.stop_redis(settings.DATA_DIR)
            embedded.stop_postgres(settings.DATA_DIR)
            shutil.rmtree(settings.DATA_DIR, ignore_errors=True)
    print(json.dumps(figures, default=str))
    result = figures["check"]
    if (
        result["lost"]
        or result["deals_doubled"]
        or result["settled_more_than_once"]
        or (result["reconcile_exit"] or figures["bad_answers"])
    ):
        raise SystemExit("hot_path: FAILED (see check)")


if __name__ == "__main__":
    main()
