"""Webhook deliveries per second: events POSTed, signed, to a local receiver by a real Celery
worker on the webhook queue.

1. Baseline, measured in the same run: the same receiver's rate for plain POSTs of an event's
   body, one connection each, from WEBHOOK_CONCURRENCY threads of this process (what the HTTP
   part alone allows on this machine).
2. The delivery path: EVENTS events of one client are recorded (not timed) for a client with one
   endpoint on 127.0.0.1; a wake is sent to one `--pool solo` worker on `<queue>.webhooks`, and
   the clock runs until every delivery is `delivered` (fanned out from the feed, claimed SKIP
   LOCKED, signed, POSTed WEBHOOK_CONCURRENCY at a time, written back).
The figure is events delivered per second and its ratio to the baseline. The last line is one
JSON object with every figure.

Run: `.venv/bin/python bench/webhooks.py [--events 2000]` (own database `bench_webhooks` on the
embedded server and its own queue on the embedded broker).
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rummy_ledger.settings")
os.environ.setdefault("EMBEDDED_DATABASE_NAME", "bench_webhooks")
os.environ.setdefault("LOG_LEVEL", "WARNING")
QUEUE = f"bench-webhooks-{os.getpid()}"
os.environ["CELERY_TASK_DEFAULT_QUEUE"] = QUEUE

from bench.startup import django_start  # noqa: E402

django_start()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402

from rummy_ledger.api.keys import api_client_create  # noqa: E402
from rummy_ledger.dev import embedded  # noqa: E402
from rummy_ledger.events import renderers  # noqa: E402
from rummy_ledger.events.event_types import EventType  # noqa: E402
from rummy_ledger.events.models import Delivery  # noqa: E402
from rummy_ledger.events.record import Happened, events_record  # noqa: E402
from rummy_ledger.events.tasks import deliver_waiting, webhook_queue  # noqa: E402
from rummy_ledger.events.webhooks.addresses import target_checked  # noqa: E402
from rummy_ledger.events.webhooks.delivery import post  # noqa: E402
from rummy_ledger.events.webhooks.endpoints import endpoint_create  # noqa: E402

# A deal's data is a few hundred bytes as `GET /games/{id}` shows it: this stands in for it.
DATA = {"deal_no": 1, "status": "settled", "points": {f"p{n}": n for n in range(6)}, "x": "y" * 400}


class Subject(NamedTuple):  # an event's object: only its pk is rendered here
    pk: int


class Server(ThreadingHTTPServer):
    request_queue_size = 256  # the listen backlog (5 by default: a burst of connects would wait)
    daemon_threads = True


class Receiver:
    def __init__(self):
        self.count = 0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def do_POST(self):
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.count += 1
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def baseline(receiver: Receiver, n: int) -> float:
    target = target_checked(receiver.url)
    body = json.dumps({"id": 1, "type": "deal.settled", "data": DATA}).encode()
    headers = {"Content-Type": "application/json"}
    started = time.perf_counter()
    with ThreadPoolExecutor(settings.WEBHOOK_CONCURRENCY) as pool:
        answers = list(pool.map(lambda _: post(target, body, headers), range(n)))
    assert all(a.ok for a in answers)
    return n / (time.perf_counter() - started)


def events_recorded(client_id: int, n: int) -> None:
    renderers._RENDERERS[EventType.DEAL_SETTLED] = lambda subjects: {s.pk: DATA for s in subjects}
    for first in range(0, n, 500):
        with transaction.atomic():
            events_record(
                [
                    Happened(EventType.DEAL_SETTLED, client_id, Subject(i))
                    for i in range(first, first + 500)
                ]
            )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=2000)
    args = parser.parse_args()
    if embedded.redis_url(settings.DATA_DIR) == settings.CELERY_BROKER_URL:
        embedded.ensure_redis(settings.DATA_DIR)
    call_command("migrate", verbosity=0)
    receiver = Receiver()
    base = baseline(receiver, args.events)
    print(f"plain POSTs to the receiver, {settings.WEBHOOK_CONCURRENCY} threads: {base:,.0f}/s")

    client, _ = api_client_create(name=f"bench-{time.time_ns()}", scopes=["games"])
    endpoint, _ = endpoint_create(client=client, url=receiver.url, types=["deal.settled"])
    events_recorded(client.pk, args.events)
    connection.close()
    env = {**os.environ, "CELERY_TASK_DEFAULT_QUEUE": QUEUE}
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "rummy_ledger", "worker", "-Q", webhook_queue(),
         "-n", f"{QUEUE}@%h", "--pool", "solo", "--loglevel", "WARNING", "--without-gossip",
         "--without-mingle", "--without-heartbeat"],
        cwd=ROOT, env=env, start_new_session=True,
    )  # fmt: skip
    try:
        received_before = receiver.count
        started = time.perf_counter()
        deliver_waiting.delay()
        deadline = time.monotonic() + 600
        done = 0
        while done < args.events and time.monotonic() < deadline:
            time.sleep(0.1)
            done = Delivery.objects.filter(endpoint=endpoint, status="delivered").count()
        elapsed = time.perf_counter() - started
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=30)
    if done < args.events:
        raise SystemExit(f"only {done} of {args.events} delivered")
    rate = args.events / elapsed
    print(
        f"delivered {args.events} events in {elapsed:.2f}s by one worker: {rate:,.0f}/s "
        f"= {rate / base:.2f} x plain POSTs ({receiver.count - received_before} received)"
    )
    print(json.dumps({
        "events": args.events, "seconds": round(elapsed, 3), "delivered_per_s": round(rate, 1),
        "plain_posts_per_s": round(base, 1), "ratio": round(rate / base, 3),
        "concurrency": settings.WEBHOOK_CONCURRENCY, "batch": settings.WEBHOOK_BATCH,
    }))  # fmt: skip


if __name__ == "__main__":
    main()
