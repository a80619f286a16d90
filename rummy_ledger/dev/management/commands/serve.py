"""`make run`: migrate, seed demo data, then run and supervise web, beat and Celery workers.

See `rummy_ledger.dev.supervisor` for what happens when one of them dies. Exit status: 0 after
Ctrl-C or SIGTERM, 1 when a process kept dying and the supervisor gave up, 2 when the port is
taken (nothing was started).

The log says what an operator needs: each process started, died or restarted, warnings and
errors, the demo's URLs, key and passwords as soon as the web answers `/readyz`, the simulator's
summary once it has played (the start-up ends there), and one line once everything has stopped.
`LOG_LEVEL=DEBUG` adds the access log, gunicorn's and Celery's start-up, every task, beat's
wakes and the simulator's games.
"""

import os
import secrets
import shutil
import signal
import socket
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from rummy_ledger import db, instance
from rummy_ledger.dev import embedded
from rummy_ledger.dev.supervisor import Child, Daemon, Supervisor
from rummy_ledger.errors import DomainError
from rummy_ledger.events.tasks import webhook_queue
from rummy_ledger.metrics import MULTIPROC_ENV
from wallets.services.wind_down import real_money_start_check

PORT_IN_USE = 2
WEB_WORKER = "rummy_ledger.api.worker.EnvelopeErrorWorker"
# Celery warns at length when run as root (celery.platforms); the filter keeps every other warning.
_NOT_AS_ROOT = ",".join(
    filter(None, [os.environ.get("PYTHONWARNINGS"), "ignore:You're running the worker with"])
)


class Command(BaseCommand):
    help = "Run the service: embedded database and broker, demo data, web and workers, supervised."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
        parser.add_argument("--workers", type=int, default=2, help="Celery worker processes")
        parser.add_argument("--no-demo", action="store_true", help="skip demo data")

    def handle(self, *args, port: int, workers: int, no_demo: bool, **options):
        # Until the supervisor takes over, SIGTERM (e.g. from `timeout`) stops like Ctrl-C does.
        signal.signal(signal.SIGTERM, _interrupt)
        signal.signal(signal.SIGHUP, _interrupt)
        # The port first, before anything is started: bound here and handed to gunicorn, so no
        # other server can take it in between and a restarted gunicorn finds it at once.
        listener = _listen("127.0.0.1", port)
        daemons = self._embedded_daemons()
        try:
            for daemon in daemons:
                daemon.start()  # the broker must answer before migrate and seed_demo run
            with db.advisory_lock(db.MIGRATE_LOCK):  # nodes starting at once take turns
                call_command("migrate", verbosity=0)
            try:
                real_money_start_check()
            except DomainError as refused:
                raise CommandError(refused.message) from refused
            call_command("collectstatic", interactive=False, verbosity=0)
            if not no_demo:
                call_command("seed_demo", base_url=f"http://127.0.0.1:{port}", verbosity=0)
                call_command("seed_games", verbosity=0)
                call_command("seed_tournaments", verbosity=0)
            token = secrets.token_hex(16)
            children = self._children(listener, port, workers, token, demo=not no_demo)
            supervisor = Supervisor([*daemons, *children], say=self._say)
            demo = (
                f"; the demo's key and passwords follow as soon as it answers (and are in "
                f"{settings.DEMO_NOTE_FILE})"
                if not no_demo
                else ""
            )
            self._say(
                f"Serving on http://127.0.0.1:{port}/  (API docs /api/docs/, admin /admin/)"
                f"{demo}. Ctrl-C stops everything."
            )
            status = supervisor.run()
        except KeyboardInterrupt:
            status = 0
        finally:
            for daemon in daemons:
                daemon.wait(0)  # stops what this run started; a no-op after supervisor.run
            listener.close()
        self._say(
            "stopped: a process kept failing (exit status 1)"
            if status
            else "stopped (exit status 0)"
        )
        if status:
            sys.exit(status)

    def _say(self, message: str) -> None:
        self.stdout.write(f"serve: {message}")
        self.stdout.flush()

    def _answering(self) -> None:
        """The web answers: what a person needs, before the demo plays (its summary follows)."""
        self._say("answering. The demo plays now; its summary follows.")
        self.stdout.write(settings.DEMO_NOTE_FILE.read_text(), ending="")
        self.stdout.flush()

    def _started(self) -> None:
        """The end of start-up (the simulator has played and printed its summary)."""
        self._say(
            f"started (the demo's key and passwords: above, and in {settings.DEMO_NOTE_FILE}). "
            "Ctrl-C stops everything."
        )

    def _embedded_daemons(self) -> list[Daemon]:
        """The embedded servers this checkout runs on, watched and restarted when they die."""
        data_dir = settings.DATA_DIR
        daemons = []
        if embedded.postgres_attached(data_dir):
            daemons.append(
                Daemon(
                    "embedded PostgreSQL",
                    pid=lambda: embedded.postgres_pid(data_dir),
                    ensure=lambda: embedded.ensure_postgres(data_dir),
                )  # stops by itself when the last process using it exits
            )
        if embedded.redis_url(data_dir) == settings.CELERY_BROKER_URL:
            daemons.append(
                Daemon(
                    "embedded Redis",
                    pid=lambda: embedded.redis_pid(data_dir),
                    # one a killed run left behind is adopted, and stopped with this run
                    ensure=lambda: (
                        embedded.ensure_redis(data_dir) or embedded.redis_adopt(data_dir)
                    ),
                    stop=lambda: embedded.redis_release(data_dir),
                )
            )
        return daemons

    def _children(self, listener, port: int, workers: int, token: str, *, demo: bool) -> list:
        debug = settings.LOG_LEVEL == "DEBUG"
        metrics = _metrics_dir()
        web_env = {**os.environ, instance.ENV: token, MULTIPROC_ENV: str(metrics)}
        if os.environ.get("WEB_DATABASE_URL"):  # the web's role of its own (its request bounds)
            web_env["DATABASE_URL"] = os.environ["WEB_DATABASE_URL"]
        # Celery's banners and its warning about running as root (a demo on a root shell) are
        # noise in an operator's log; they come back with LOG_LEVEL=DEBUG.
        celery = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "rummy_ledger",
            *([] if debug else ["--quiet"]),
        ]
        celery_env = {**os.environ, MULTIPROC_ENV: str(metrics)}
        if not debug:
            celery_env["PYTHONWARNINGS"] = _NOT_AS_ROOT
        level = "INFO" if debug else "WARNING"  # INFO: every task, and beat's wakes every 2 s
        fd = listener.fileno()
        children = [
            Child(
                "web",
                [sys.executable, "-m", "gunicorn", "rummy_ledger.wsgi", "--bind", f"fd://{fd}",
                 "--workers", os.environ.get("WEB_CONCURRENCY", "2"), "--log-level", level.lower(),
                 *(["--access-logfile", "-"] if debug else []),
                 # gunicorn's own 400/414/431 in the JSON envelope, not its HTML page
                 "--worker-class", WEB_WORKER,
                 # marks a dead worker's metrics files (rummy_ledger.metrics)
                 "--config", "python:rummy_ledger.gunicorn_hooks",
                 # gunicorn's default control socket is one per user, shared by every gunicorn
                 # on the machine: each run gets its own.
                 "--control-socket", str(settings.DATA_DIR / "gunicorn.ctl")],
                env=web_env,
                pass_fds=[fd],
            ),
            Child("beat", [*celery, "beat", "--loglevel", level], env=celery_env),
            # One solo worker per process: no prefork parent relaying every message by pipe.
            # Named by the node's port too: two nodes on one host (one broker) must not share a
            # name (RabbitMQ refuses the second's exclusive control queue).
            *(Child(f"worker{n}", [*celery, "worker", "--pool", "solo", "-n",
                                   f"worker{n}-{port}@%h",
                                   "--loglevel", level], env=celery_env)
              for n in range(1, workers + 1)),
            # Webhook deliveries on their own queue and worker (a run sends WEBHOOK_CONCURRENCY
            # at once, in threads), so a slow receiver never holds up settlement.
            Child("webhooks", [*celery, "worker", "--pool", "solo", "-Q", webhook_queue(),
                               "-n", f"webhooks-{port}@%h", "--loglevel", level],
                  env=celery_env),
        ]  # fmt: skip
        return children + (self._demo(port, token, debug) if demo else [])

    def _demo(self, port: int, token: str, debug: bool) -> list:
        """The demo's note once the web answers; a game-server simulator plays real games over
        HTTP, then stops."""
        ready = f"http://127.0.0.1:{port}/readyz"
        simulate = [
            sys.executable, str(settings.BASE_DIR / "manage.py"), "simulate",
            "--base-url", f"http://127.0.0.1:{port}", "--instance", token,
            "--rounds", os.environ.get("SIMULATE_ROUNDS", "3"), "-v", "2" if debug else "1",
        ]  # fmt: skip
        return [
            Probe("probe", ready, when_done=self._answering),
            Child("simulator", simulate, restart=False, when_done=self._started),
        ]


class Probe:
    """Not a process: a URL the supervisor polls with its other services (the supervisor starts
    no threads: its children fork from it) until it answers 200, then `when_done` runs once."""

    restart = False
    INTERVAL = 0.5

    def __init__(self, name: str, url: str, *, when_done):
        self.name = name
        self.url = url
        self.when_done = when_done
        self._next = 0.0

    def start(self) -> str:
        return f"waiting for {self.url} to answer 200"

    def exit_reason(self) -> str | None:
        now = time.monotonic()
        if now < self._next:
            return None
        self._next = now + self.INTERVAL
        try:
            with urllib.request.urlopen(self.url, timeout=self.INTERVAL) as response:
                answered = response.status == 200
        except OSError:  # refused, a timeout, or an HTTPError (a 503 while not ready)
            answered = False
        return f"{self.url} answered 200" if answered else None

    def terminate(self) -> None:
        pass

    def wait(self, deadline: float) -> None:
        pass


def _metrics_dir() -> Path:
    """Where every process of this run writes its metrics for the web to sum (prometheus-client's
    multiprocess mode): emptied at each start, so a run counts from zero and no dead process of an
    earlier run is summed."""
    path = Path(os.environ.get(MULTIPROC_ENV) or settings.DATA_DIR / "metrics")
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path


def _listen(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gunicorn does
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise CommandError(
            f"cannot listen on {host}:{port}: {exc.strerror}. Another server is probably "
            "running there; stop it or choose another port (--port, or PORT=... make run).",
            returncode=PORT_IN_USE,
        ) from None
    sock.listen(2048)
    return sock


def _interrupt(signum, frame):
    raise KeyboardInterrupt
