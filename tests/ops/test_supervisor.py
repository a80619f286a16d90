"""The supervisor with real child processes: restarts, the reasons it names, giving up, stopping."""

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from rummy_ledger.dev.supervisor import (
    GAVE_UP,
    Child,
    Daemon,
    Failures,
    Policy,
    Supervisor,
    describe_exit,
)

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]
FAST = Policy(first_delay=0.05, max_delay=0.2, max_failures=3, window=30)


def wait_for(condition, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.02)


def run_in_background(supervisor: Supervisor) -> tuple[threading.Thread, list]:
    """Run the supervisor in a thread (no signal handlers there); returns it and its result."""
    result: list = []
    thread = threading.Thread(target=lambda: result.append(supervisor.run()), daemon=True)
    thread.start()
    return thread, result


def test_backoff_doubles_from_the_first_delay_and_is_capped():
    policy = Policy(first_delay=1, max_delay=30)
    assert [policy.delay(n) for n in range(1, 8)] == [1, 2, 4, 8, 16, 30, 30]


def test_only_failures_within_the_window_count():
    failures = Failures(window=60)
    assert [failures.record(t) for t in (0, 10, 20, 70, 200)] == [1, 2, 3, 3, 1]


def test_exit_reasons_name_the_signal_or_the_status():
    assert describe_exit(-signal.SIGKILL) == "was killed by SIGKILL"
    assert describe_exit(-signal.SIGSEGV) == "was killed by SIGSEGV"
    assert describe_exit(3) == "exited with status 3"


def test_a_killed_child_is_named_restarted_and_stopped_at_the_end():
    # given
    said: list[str] = []
    child = Child("sleeper", SLEEPER)
    supervisor = Supervisor([child], policy=FAST, say=said.append, tick=0.02)
    thread, result = run_in_background(supervisor)
    wait_for(lambda: child.pid is not None)
    first = child.process
    # when
    os.kill(first.pid, signal.SIGKILL)
    wait_for(lambda: child.process is not first)
    second = child.process
    supervisor.request_stop()
    thread.join(timeout=30)
    # then
    assert result == [0]
    assert said == [
        f"sleeper started (pid {first.pid})",
        "sleeper was killed by SIGKILL; restarting it in 0.05 s",
        f"sleeper restarted (pid {second.pid})",
    ]
    assert second.returncode == -signal.SIGTERM  # stopped, not left running


def test_a_child_that_keeps_failing_makes_it_give_up_and_stop_the_others():
    # given: one child that exits at once with status 3, one that would run for a minute
    said: list[str] = []
    crasher = Child("crasher", [sys.executable, "-c", "import sys; sys.exit(3)"])
    steady = Child("steady", SLEEPER)
    supervisor = Supervisor([steady, crasher], policy=FAST, say=said.append, tick=0.02)
    # when
    status = supervisor.run()
    # then
    assert status == GAVE_UP
    deaths = [line for line in said if line.startswith("crasher exited with status 3")]
    assert deaths == [
        "crasher exited with status 3; restarting it in 0.05 s",
        "crasher exited with status 3; restarting it in 0.1 s",
        "crasher exited with status 3; that is 3 failures within 30 s: giving up, stopping "
        "everything",
    ]
    assert steady.process.returncode == -signal.SIGTERM


def test_a_one_shot_job_is_reported_once_and_not_restarted_then_followed_up():
    said: list[str] = []
    job = Child(
        "job",
        [sys.executable, "-c", "pass"],
        restart=False,
        when_done=lambda: said.append("follow-up"),  # serve: the demo's key and passwords
    )
    steady = Child("steady", SLEEPER)
    supervisor = Supervisor([steady, job], policy=FAST, say=said.append, tick=0.02)
    thread, result = run_in_background(supervisor)
    wait_for(lambda: "job exited with status 0" in said)
    time.sleep(0.2)  # several more ticks
    supervisor.request_stop()
    thread.join(timeout=30)
    assert result == [0]
    assert [line for line in said if line.startswith("job")] == [
        f"job started (pid {job.pid})",
        "job exited with status 0",
    ]
    assert said.count("follow-up") == 1 and said.index("follow-up") > said.index(
        "job exited with status 0"
    )


class SleeperDaemon:
    """A stand-in for the embedded servers: a detached process found through its pid."""

    def __init__(self, log: list[str]):
        self.log = log
        self.process = None

    def pid(self) -> int | None:
        alive = self.process is not None and self.process.poll() is None
        return self.process.pid if alive else None

    def ensure(self) -> bool:
        if self.pid() is not None:
            return False
        self.process = subprocess.Popen(SLEEPER)
        return True

    def stop(self) -> None:
        self.log.append("daemon stopped")
        self.process.terminate()
        self.process.wait()


def test_a_dead_daemon_is_restarted_and_stopped_after_the_children_that_use_it():
    # given
    said: list[str] = []
    server = SleeperDaemon(said)
    daemon = Daemon("server", pid=server.pid, ensure=server.ensure, stop=server.stop)
    child = Child("client", SLEEPER)
    supervisor = Supervisor([daemon, child], policy=FAST, say=said.append, tick=0.02)
    thread, result = run_in_background(supervisor)
    wait_for(lambda: child.pid is not None and server.pid() is not None)
    first = server.process
    # when
    os.kill(first.pid, signal.SIGKILL)
    wait_for(lambda: server.process is not first and server.pid() is not None)
    supervisor.request_stop()
    thread.join(timeout=30)
    # then
    assert result == [0]
    assert f"server is not running (pid {first.pid} is gone); restarting it in 0.05 s" in said
    assert f"server restarted (pid {server.process.pid})" in said
    assert said[-1] == "daemon stopped"
    assert child.process.returncode == -signal.SIGTERM  # stopped before the daemon


@pytest.mark.timeout(60)
def test_a_signal_stops_everything_and_the_exit_status_is_zero(tmp_path):
    # given: a supervisor in its own process (signal handlers live in a main thread)
    pidfile = tmp_path / "child.pid"
    script = (
        "import sys\n"
        "from rummy_ledger.dev.supervisor import Child, Supervisor\n"
        f"child = Child('sleeper', {SLEEPER!r})\n"
        "supervisor = Supervisor([child], say=lambda m: None, tick=0.02)\n"
        "import threading, time\n"
        "def note():\n"
        "    while child.pid is None: time.sleep(0.01)\n"
        f"    open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
        "threading.Thread(target=note, daemon=True).start()\n"
        "sys.exit(supervisor.run())\n"
    )
    process = subprocess.Popen([sys.executable, "-c", script])
    wait_for(lambda: pidfile.exists() and pidfile.read_text())
    child_pid = int(pidfile.read_text())
    # when
    process.send_signal(signal.SIGTERM)
    # then
    assert process.wait(timeout=30) == 0
    wait_for(lambda: not _alive(child_pid))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True
