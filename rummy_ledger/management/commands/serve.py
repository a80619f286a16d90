"""`make run`: migrate, seed demo data, then run the web server and a Celery worker (with beat)."""

import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

from rummy_ledger import embedded


class Command(BaseCommand):
    help = "Run the service: embedded database and broker, demo data, web and worker."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument("--workers", type=int, default=2, help="Celery worker processes")
        parser.add_argument("--no-demo", action="store_true", help="skip demo data")

    def handle(self, *args, port: int, workers: int, no_demo: bool, **options):
        # SIGTERM (e.g. from `timeout` or a process manager) shuts down like Ctrl-C does.
        signal.signal(signal.SIGTERM, _interrupt)
        signal.signal(signal.SIGHUP, _interrupt)
        started_redis = False
        if not os.environ.get("CELERY_BROKER_URL"):
            started_redis = embedded.ensure_redis(settings.DATA_DIR)
        call_command("migrate", verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)
        if not no_demo:
            call_command("seed_demo", base_url=f"http://127.0.0.1:{port}")
            call_command("seed_games")
        celery = [sys.executable, "-m", "celery", "-A", "rummy_ledger"]
        commands = [
            [sys.executable, "-m", "gunicorn", "rummy_ledger.wsgi", "--bind",
             f"127.0.0.1:{port}", "--workers", "2", "--access-logfile", "-"],
            [*celery, "beat", "--loglevel", "INFO"],
            # One solo worker per process: no prefork parent relaying every message by pipe.
            *([*celery, "worker", "--pool", "solo", "-n", f"worker{n}@%h", "--loglevel", "INFO"]
              for n in range(1, workers + 1)),
        ]  # fmt: skip
        children = [subprocess.Popen(command) for command in commands]
        self.stdout.write(
            f"Serving on http://127.0.0.1:{port}/  (API docs /api/docs/, admin /admin/). "
            "Ctrl-C stops everything."
        )
        simulator = None
        if not no_demo:  # a game-server simulator plays real games over HTTP, then stops
            simulator = subprocess.Popen(
                [sys.executable, str(settings.BASE_DIR / "manage.py"), "simulate",
                 "--base-url", f"http://127.0.0.1:{port}",
                 "--rounds", os.environ.get("SIMULATE_ROUNDS", "3")]
            )  # fmt: skip
        try:
            while all(child.poll() is None for child in children):
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
        finally:
            if simulator is not None and simulator.poll() is None:
                simulator.terminate()
            for child in children:
                if child.poll() is None:
                    child.send_signal(signal.SIGTERM)
            for child in children:
                try:
                    child.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    child.kill()
            if started_redis:
                embedded.stop_redis(settings.DATA_DIR)


def _interrupt(signum, frame):
    raise KeyboardInterrupt
