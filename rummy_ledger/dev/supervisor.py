"""Keep the service's processes up: restart what dies, give up on what keeps dying.

`manage.py serve` runs gunicorn, Celery beat and the Celery workers as children and watches the
embedded PostgreSQL and Redis. One of them dying must not take the others down: it is named, with
the reason (exit status or signal), and started again after a delay that doubles with each recent
failure (1 s, 2 s, 4 s ... capped). A process that dies `max_failures` times within `window`
seconds has a fault no restart cures: the supervisor then stops everything and returns 1, so an
outer supervisor (systemd, a container runtime) sees the failure. A stop request (SIGINT,
SIGTERM, SIGHUP) stops everything and returns 0.
"""

from __future__ import annotations

import contextlib
import ctypes
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

GAVE_UP = 1


@dataclass(frozen=True)
class Policy:
    first_delay: float = 1.0
    max_delay: float = 30.0
    max_failures: int = 5
    window: float = 60.0

    def delay(self, recent_failures: int) -> float:
        """Seconds to wait before restart number `recent_failures` (1-based) within the window."""
        return min(self.first_delay * 2 ** (recent_failures - 1), self.max_delay)


class Failures:
    """When one process failed; only failures within the window count, so a process that has
    run steadily for a while starts again from the shortest delay."""

    def __init__(self, window: float):
        self.window = window
        self.times: deque[float] = deque()

    def record(self, now: float) -> int:
        self.times.append(now)
        while self.times[0] < now - self.window:
            self.times.popleft()
        return len(self.times)


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with status {returncode}"


class Service(Protocol):
    name: str
    restart: bool  # False for a one-shot job (e.g. the demo simulator): reported, not restarted
    when_done: Callable[[], None] | None  # a one-shot job's follow-up, once it has ended

    def start(self) -> str:
        """Start it (or find it running); returns how to find it, e.g. "pid 123"."""

    def exit_reason(self) -> str | None:
        """None while it runs, else why it is gone."""

    def terminate(self) -> None:
        """Begin stopping it without waiting."""

    def wait(self, deadline: float) -> None:
        """Finish stopping it, forcibly once `deadline` (time.monotonic) has passed."""


def _die_with_parent() -> None:
    """Child side, before exec: get SIGTERM if the supervisor itself dies (even by SIGKILL), so a
    killed `serve` leaves no orphaned web or workers behind (Linux; a no-op elsewhere)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Child:
    """A child process. It gets its own session, so a Ctrl-C at the terminal reaches only the
    supervisor, which then stops the children in order."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        *,
        env: dict[str, str] | None = None,
        pass_fds: Sequence[int] = (),
        restart: bool = True,
        when_done: Callable[[], None] | None = None,
    ):
        self.name = name
        self.argv = list(argv)
        self.env = env
        self.pass_fds = tuple(pass_fds)
        self.restart = restart
        self.when_done = when_done
        self.process: subprocess.Popen | None = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def start(self) -> str:
        self.process = subprocess.Popen(
            self.argv,
            env=self.env,
            pass_fds=self.pass_fds,
            start_new_session=True,
            preexec_fn=_die_with_parent,  # safe: the supervisor runs no threads of its own
        )
        return f"pid {self.process.pid}"

    def exit_reason(self) -> str | None:
        if self.process is None:
            return "was never started"
        returncode = self.process.poll()
        return None if returncode is None else describe_exit(returncode)

    def terminate(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()

    def wait(self, deadline: float) -> None:
        if self.process is None:
            return
        try:
            self.process.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class Daemon:
    """A server that runs detached (the embedded PostgreSQL or Redis), watched through its pid.

    `ensure` starts it unless it runs and says whether it did; `stop` (optional) stops it when
    the supervisor stops, and only if this supervisor started it: a server someone else started
    is theirs to stop.
    """

    restart = True
    when_done = None

    def __init__(
        self,
        name: str,
        *,
        pid: Callable[[], int | None],
        ensure: Callable[[], bool],
        stop: Callable[[], None] | None = None,
    ):
        self.name = name
        self._pid = pid
        self._ensure = ensure
        self._stop = stop
        self.started_here = False
        self.last_pid: int | None = None

    def start(self) -> str:
        self.started_here |= self._ensure()
        pid = self._pid()
        if pid is None:  # e.g. the old server's processes still hold its shared memory
            raise RuntimeError("it did not come up")
        self.last_pid = pid
        return f"pid {pid}"

    def exit_reason(self) -> str | None:
        if self._pid() is not None:
            return None
        return f"is not running (pid {self.last_pid} is gone)"

    def terminate(self) -> None:
        """Nothing yet: it goes last, once the processes that use it have stopped."""

    def wait(self, deadline: float) -> None:
        if self._stop is not None and self.started_here:
            self._stop()


@dataclass
class _Watch:
    service: Service
    failures: Failures
    restart_at: float | None = None
    done: bool = False


class Supervisor:
    def __init__(
        self,
        services: Sequence[Service],
        *,
        policy: Policy | None = None,
        say: Callable[[str], None] = print,
        tick: float = 0.25,
        stop_timeout: float = 20.0,
    ):
        self.policy = policy or Policy()
        self.services = list(services)
        self.say = say
        self.tick = tick
        self.stop_timeout = stop_timeout
        self._stopping = False  # a plain flag: a signal handler must not take a lock

    def request_stop(self, *_args) -> None:
        self._stopping = True

    def run(self) -> int:
        """Start every service, keep them up until a stop request; 0, or GAVE_UP."""
        previous = self._handle_signals()
        try:
            watches = [_Watch(s, Failures(self.policy.window)) for s in self.services]
            for watch in watches:
                self.say(f"{watch.service.name} started ({watch.service.start()})")
            while not self._stopping:
                time.sleep(self.tick)
                for watch in watches:
                    if not watch.done and not self._check(watch, time.monotonic()):
                        return GAVE_UP
            return 0
        finally:
            self.stop_all()
            for signum, handler in previous.items():
                signal.signal(signum, handler)

    def _check(self, watch: _Watch, now: float) -> bool:
        """Restart a due service or notice a dead one; False when it is time to give up."""
        service = watch.service
        if watch.restart_at is not None:
            if now < watch.restart_at:
                return True
            watch.restart_at = None
            try:
                self.say(f"{service.name} restarted ({service.start()})")
                return True
            except Exception as exc:  # a failed start is one more failure, retried with backoff
                reason = f"could not be started: {exc}"
        else:
            reason = service.exit_reason()
            if reason is None:
                return True
        if not service.restart:
            watch.done = True
            self.say(f"{service.name} {reason}")
            if service.when_done is not None:
                service.when_done()
            return True
        failures = watch.failures.record(now)
        if failures >= self.policy.max_failures:
            self.say(
                f"{service.name} {reason}; that is {failures} failures within "
                f"{self.policy.window:g} s: giving up, stopping everything"
            )
            return False
        delay = self.policy.delay(failures)
        self.say(f"{service.name} {reason}; restarting it in {delay:g} s")
        watch.restart_at = now + delay
        return True

    def stop_all(self) -> None:
        """Stop children in reverse order of start, all at once; the daemons they use go last."""
        for service in reversed(self.services):
            service.terminate()
        deadline = time.monotonic() + self.stop_timeout
        for service in reversed(self.services):
            service.wait(deadline)

    def _handle_signals(self) -> dict:
        if threading.current_thread() is not threading.main_thread():
            return {}
        signums = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        previous = {signum: signal.getsignal(signum) for signum in signums}
        for signum in signums:
            signal.signal(signum, self.request_stop)
        return previous
