"""What a request's rate limit costs (rummy_ledger/api/limits.py): one token taken as a request
takes it (from this process's lease, and one EVALSHA over a Redis socket per lease) against the
baseline of a Redis `PING` round trip, in alternated rounds of the same run; and the web process's
CPU for a take. A private
embedded Redis under /tmp; no database.

Printed per round: microseconds a ping and a take take (wall clock), the take's CPU in this
process, and the ratio take / ping (goal <= 3: one round trip, a small script). The last line is
one JSON object. The cost of a request is the take's wall time; a deal post's is in
bench/hot_path.py (compare runs of it with and without the limits, alternated, on a quiet
machine).

Run: `RUMMY_EMBEDDED=1 .venv/bin/python bench/rate_limits.py [--rounds 5] [--calls 5000]`
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rummy_ledger.dev import embedded

GOAL_RATIO = 3.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=5000)
    args = parser.parse_args()
    directory = Path(tempfile.mkdtemp(prefix="rummy-rate-limits-"))
    embedded.ensure_redis(directory)
    os.environ["RATE_LIMIT_REDIS_URL"] = embedded.redis_url(directory)
    try:
        from startup import django_start

        django_start()
        import redis

        from rummy_ledger.api import limits
        from rummy_ledger.api.models import ApiClient

        client = ApiClient(name="bench", key_prefix="bench0000000", rate_limit=1_000_000)
        server = redis.Redis(unix_socket_path=str(embedded.redis_socket(directory)))
        limits.bucket_take(client)  # the script loaded once
        rounds = []
        for n in range(args.rounds):
            started = time.perf_counter()
            for _ in range(args.calls):
                server.ping()
            ping = (time.perf_counter() - started) / args.calls
            started, cpu = time.perf_counter(), time.process_time()
            for _ in range(args.calls):
                limits.bucket_take(client)
            take = (time.perf_counter() - started) / args.calls
            take_cpu = (time.process_time() - cpu) / args.calls
            rounds.append(
                {"ping_us": ping * 1e6, "take_us": take * 1e6, "take_cpu_us": take_cpu * 1e6}
            )
            print(f"round {n + 1}: ping {ping * 1e6:.0f} us, take {take * 1e6:.0f} us "
                  f"(CPU here {take_cpu * 1e6:.0f} us), ratio {take / ping:.2f}")  # fmt: skip
    finally:
        embedded.stop_redis(directory)
    best = min(rounds, key=lambda r: r["take_us"] / r["ping_us"])
    figures = {
        "rounds": args.rounds,
        "calls": args.calls,
        "take_us_median": round(sorted(r["take_us"] for r in rounds)[len(rounds) // 2], 1),
        "take_cpu_us_median": round(sorted(r["take_cpu_us"] for r in rounds)[len(rounds) // 2], 1),
        "ping_us_median": round(sorted(r["ping_us"] for r in rounds)[len(rounds) // 2], 1),
        "best_ratio_to_ping": round(best["take_us"] / best["ping_us"], 2),
        "goal_ratio": GOAL_RATIO,
    }
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
