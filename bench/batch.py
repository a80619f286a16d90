"""The batch endpoint end to end: deals settled per second when game servers post them in batches
(`POST /api/v1/deals`) over HTTP, against the settle-only rate measured in the same run.

1. Baseline, `bench/settlement.py`'s settle-only measure on the same database and workers: GAMES
   6-player points games opened and their deal stored in-process (not timed), then a
   `settle_waiting` wake each to 2 `--pool solo` Celery workers; deals settled per second.
2. The HTTP path: as many games again opened in-process (not timed); `--clients` threads post
   their deals in batches of `--batch` to gunicorn (`--web-workers` workers, the API's own worker
   class) while the same 2 workers settle them (one wake per batch). The clock
   runs from the first post until every deal is settled: deals settled end to end per second,
   its ratio to the baseline (goal >= 0.8), and each batch's latency, p50 and p99 (goal < 250 ms).
The machine's cores are shared by the clients, gunicorn, the workers and PostgreSQL. The last
line is one JSON object with every figure.

Run: `.venv/bin/python bench/batch.py [--games 2000] [--clients 8] [--batch 50]` (own database
`bench_batch` on the embedded server and its own queue on the embedded broker).
"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("RUMMY_EMBEDDED", "1")
os.environ.setdefault("EMBEDDED_DATABASE_NAME", "bench_batch")

import requests  # noqa: E402
import settlement as baseline  # noqa: E402  (sets Django up, and this run's queue)
from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402

from rummy_ledger.api.keys import api_client_create  # noqa: E402
from rummy_ledger.dev import embedded  # noqa: E402
from rummy_ledger.dev.management.commands.serve import WEB_WORKER  # noqa: E402
from tournaments.models import Deal  # noqa: E402
from tournaments.tasks import settle_waiting  # noqa: E402


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_web(port: int, workers: int) -> subprocess.Popen:
    web = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "rummy_ledger.wsgi", "--bind", f"127.0.0.1:{port}",
         "--workers", str(workers), "--worker-class", WEB_WORKER, "--log-level", "warning"],
        cwd=ROOT, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            requests.get(f"http://127.0.0.1:{port}/api/v1/templates", timeout=10)
            return web
        except requests.RequestException:
            time.sleep(0.2)
    os.killpg(web.pid, signal.SIGTERM)
    raise SystemExit("gunicorn did not answer within 120 s")


def settle_only(client, players, n: int, run: str) -> float:
    """bench/settlement.py's measure: deals stored, then a wake each; deals settled per s."""
    deal_ids = baseline.open_games(client, players, n, run)
    connection.close()
    started = time.perf_counter()
    for _ in deal_ids:
        settle_waiting.delay()
    baseline.wait_settled(client, 600)
    return n / (time.perf_counter() - started)


def post_batches(url: str, key: str, batches: list[list[dict]], latencies: list, refused: list):
    try:
        _post(url, key, batches, latencies, refused)
    except BaseException as exc:  # a thread's failure is the run's
        refused.append({"status": "the client failed", "error": repr(exc)})


def _post(url: str, key: str, batches: list[list[dict]], latencies: list, refused: list):
    session = requests.Session()
    session.headers["Authorization"] = f"Api-Key {key}"
    for batch in batches:
        body, idempotency_key = {"deals": batch}, uuid.uuid4().hex
        while True:
            started = time.perf_counter()
            response = session.post(url, json=body, headers={"Idempotency-Key": idempotency_key})
            latencies.append(time.perf_counter() - started)
            if response.status_code == 200 and "Retry-After" not in response.headers:
                break
            if response.status_code not in (200, 409, 503):
                raise SystemExit(f"batch refused: {response.status_code} {response.text[:300]}")
            time.sleep(int(response.headers.get("Retry-After", "1")))
        refused += [r for r in response.json()["results"] if r["status"] != 202]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--web-workers", type=int, default=2)
    args = parser.parse_args()
    if embedded.redis_url(settings.DATA_DIR) == settings.CELERY_BROKER_URL:
        embedded.ensure_redis(settings.DATA_DIR)
    run = f"b{time.time_ns()}"
    client, players = baseline.seed(run)
    http_client, key = api_client_create(name=f"bench-http-{run}", scopes=["games"])

    warm = baseline.open_games(client, players, 40, f"{run}-warm")
    connection.close()
    workers = baseline.start_workers("solo")
    started: list[subprocess.Popen] = list(workers)
    try:
        port = free_port()
        started.append(start_web(port, args.web_workers))
        for _ in warm:
            settle_waiting.delay()
        baseline.wait_settled(client, 60)
        settle_rate = settle_only(client, players, args.games, f"{run}-s")
        print(f"settle-only (bench/settlement.py's measure): {settle_rate:,.0f} deals/s (baseline)")

        deals = baseline.games_opened(http_client, players, args.games, f"{run}-h")
        connection.close()
        batches = [deals[i : i + args.batch] for i in range(0, len(deals), args.batch)]
        shares = [batches[n :: args.clients] for n in range(args.clients)]
        latencies: list[float] = []
        refused: list[dict] = []
        url = f"http://127.0.0.1:{port}/api/v1/deals"
        threads = [
            threading.Thread(target=post_batches, args=(url, key, share, latencies, refused))
            for share in shares
        ]
        clock = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        posted = time.perf_counter() - clock
        baseline.wait_settled(http_client, 600)
        elapsed = time.perf_counter() - clock
    finally:
        baseline.stop(started)
    if refused:
        raise SystemExit(f"{len(refused)} deals refused, e.g. {refused[0]}")
    settled = Deal.objects.filter(game__client=http_client, status=Deal.Status.SETTLED).count()
    if settled != args.games:
        raise SystemExit(f"{settled} deals settled of {args.games} posted")
    rate = args.games / elapsed
    ratio = rate / settle_rate
    p50, p99 = percentile(latencies, 0.5) * 1000, percentile(latencies, 0.99) * 1000
    print(
        f"{args.clients} clients posted {args.games} deals in {len(batches)} batches of "
        f"{args.batch} in {posted:.2f}s ({args.games / posted:,.0f} deals/s ingested); all "
        f"settled after {elapsed:.2f}s: {rate:,.0f} deals/s end to end = {ratio:.2f} x "
        f"settle-only (goal 0.8); batch latency p50 {p50:.0f} ms, p99 {p99:.0f} ms (goal 250)"
    )
    print(json.dumps({
        "deals": args.games, "clients": args.clients, "batch": args.batch,
        "web_workers": args.web_workers, "celery_workers": 2,
        "settle_only_per_s": round(settle_rate, 1), "ingest_per_s": round(args.games / posted, 1),
        "end_to_end_per_s": round(rate, 1), "ratio": round(ratio, 3), "goal_ratio": 0.8,
        "batch_p50_ms": round(p50, 1), "batch_p99_ms": round(p99, 1), "goal_p99_ms": 250,
        "requests": len(latencies), "settlement_batch": settings.SETTLEMENT_BATCH,
    }))  # fmt: skip


if __name__ == "__main__":
    main()
