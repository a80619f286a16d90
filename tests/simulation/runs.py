"""The whole API against the model (tests/simulation/machine.py): a fixed, seeded budget in
`make test`, and a long run in `make soak` (SECONDS=3600) that prints the steps and faults it
ran and shrinks a failure to the shortest sequence (docs/testing.md, "The state machine").

Not collected by the suite (the name is no test file's): tests/simulation/test_api_machine.py
runs these in a child pytest on the machine's own PostgreSQL and Redis
(tests/simulation/servers.py), whose faults would otherwise hit the suite's shared servers."""

from __future__ import annotations

import os
import time
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from tests.builders import template
from tests.simulation.machine import FAULTS, TEMPLATES, TERMS, WORLD, ApiMachine, World
from tests.simulation.real_money_rules import CHIPS_TEMPLATE, RealMoneySwitch
from tests.simulation.servers import own_data_dir
from tests.tournaments.worker import private_queue
from wallets.models import CHIPS

pytestmark = pytest.mark.django_db(transaction=True)

CI_BUDGET = settings(
    max_examples=6,
    stateful_step_count=12,
    derandomize=True,  # a fixed seed: the same sequences on every run
    deadline=None,
    phases=[Phase.explicit, Phase.generate],  # CI reports the failing sequence; soak shrinks
    suppress_health_check=list(HealthCheck),
    print_blob=True,
)


@pytest.fixture
def world(live_server, settings):
    data_dir = own_data_dir()  # before anything: the faults stop its servers
    settings.API_BATCH_SECONDS = settings.REQUEST_DEADLINE_SECONDS = 120  # a loaded machine
    for slug, (fmt, value, fee, deals_n) in TEMPLATES.items():
        fields = {"point_value": value} if fmt == "points" else {"entry_fee": value}
        fields.update(TERMS.get(slug, {}))
        template(slug, fmt, fee_percent=fee, deals=deals_n or None, **fields)
    template(CHIPS_TEMPLATE, "pool101", currency=CHIPS, entry_fee=Decimal("10.00"))
    with private_queue() as queue:
        WORLD[:] = [World(live_server.url, queue, data_dir)]
        try:
            yield WORLD[0]
        finally:
            WORLD[0].worker.stop()
            WORLD.clear()


class SoakMachine(RealMoneySwitch, ApiMachine):
    """The soak's machine: the CI budget's rules and real money switched off and back."""


OUTPUT = Path(__file__).resolve().parents[2] / "test-output"


def kind(step: tuple) -> str:
    """A step's kind as the report counts it: a fault and a rejoin by what became of them."""
    if step[0] == "fault":
        return f"fault:{step[1]}"
    return f"rejoin:{step[-1]}" if step[0] == "rejoin" else step[0]


def report(world: World, started: float) -> None:
    """The steps and faults run, by kind: printed, and kept in test-output/simulation.txt (the
    soak runs under pytest-xdist, which shows no output of a passing test)."""
    kinds = Counter(kind(step) for step in world.log)
    line = f"{len(world.log)} steps in {time.monotonic() - started:.0f} s: {dict(kinds)}"
    print(f"\n{line}")
    OUTPUT.mkdir(exist_ok=True)
    (OUTPUT / "simulation.txt").write_text(line + "\n")


def regression_saved(exc: BaseException) -> None:
    """A failure's shrunk sequence as the body of a regression test (docs/testing.md)."""
    lines = "\n".join(getattr(exc, "__notes__", [])).splitlines()
    code = [n if n.startswith(("state", " ")) else f"# {n}" for n in lines]  # notes: comments
    body = "\n".join(f"    {n}" for n in code)
    test = f"def test_found_by_the_soak(world):\n{body}\n"
    OUTPUT.mkdir(exist_ok=True)
    (OUTPUT / "simulation_failure.py").write_text(test)


def test_the_api_agrees_with_the_model(world):
    started = time.monotonic()
    run_state_machine_as_test(ApiMachine, settings=CI_BUDGET)
    report(world, started)


SIM_SECONDS = float(os.environ.get("SIM_SECONDS") or 0)


@pytest.mark.soak
@pytest.mark.timeout(SIM_SECONDS + 600)  # a round of 5 runs and the shrinking after the time
def test_the_api_agrees_with_the_model_for_a_long_time(world):
    """`make soak SECONDS=3600`: random sequences until the time is up; a failure is shrunk."""
    seconds = SIM_SECONDS
    started = time.monotonic()
    try:
        while time.monotonic() - started < seconds:
            run_state_machine_as_test(
                SoakMachine,
                settings=settings(
                    CI_BUDGET, max_examples=5, stateful_step_count=50, derandomize=False,
                    phases=list(Phase),
                ),
            )  # fmt: skip
    except Exception as exc:
        regression_saved(exc)
        raise
    finally:
        report(world, started)


def test_a_pool_rejoin_split_and_cancel_agree_with_the_model(world):
    """The paths the CI budget's sequence does not reach (docs/testing.md): a pool of three where
    the second seat shows wrong twice (160, out) and the third first-drops (40); the second buys
    back in at 41 and the three split by drops left. Then a pool of p0, p2 and p3 the same way:
    p2's rejoin takes from deposit (5.34 left) and the split's winnings both, and the game is
    cancelled: each bucket gets back what it put in."""
    state = ApiMachine()
    state.players_arrive()
    picks = [("wrong_show", False), ("first_drop", False)] + [("lost", False)] * 3
    for seats, close in (({0, 1, 2}, state.split_one), ({0, 2, 3}, state.cancel_one)):
        state.open_game("sim-pool", seats)
        (game_id,) = state.open_pools()
        state.deal_one(game_id, 1, picks, True)
        state.deal_one(game_id, 2, picks, True)
        state.deals_refused(game_id, 3, picks, 2)  # deal 5, and deal 2 with other content
        (out,) = state.books.games[game_id].out
        state.rejoin_one(game_id, out)
        state.balances_agree()
        close(game_id)
        state.balances_agree()
    state.teardown()


def test_every_fault_between_two_deals_agrees_with_the_model(world):
    """Each fault the machine has, once, each before a points deal of two players (the CI
    budget's random runs reach only some): PostgreSQL restarted, and the broker stopped around
    a deal's post, on the machine's own servers (each proven to have happened: the server's pid
    changed), besides the worker killed, a message delivered twice and one lost. After each,
    the balances agree with the model and the ledger is sound; then a winner withdraws half its
    winnings (the budget's random runs may have no withdrawal), and the reconciliation is
    clean."""
    state = ApiMachine()
    state.players_arrive()
    picks = [("first_drop", False)] * 5
    pairs = [{0, 1}, {2, 3}, {0, 2}, {1, 3}, {0, 3}]  # no player loses more than three
    for n, (fault, seats) in enumerate(zip(FAULTS, pairs, strict=True)):
        state.fault(fault)
        state.open_game("sim-points", seats)
        (game_id,) = state.open_games()
        state.deal_one(game_id, n, picks, True)
        state.balances_agree()
        state.ledger_sound()
    kinds = Counter(kind(step) for step in world.log)
    assert all(kinds[f"fault:{f}"] == 1 for f in FAULTS), kinds
    state.withdraw_one(f"{state.run}-p0", 50)  # TDS on net winnings: p0 won less than it paid in
    state.teardown()


def test_two_tournaments_with_tickets_rebuys_and_a_tie_agree_with_the_model(world):
    """The tournament rule's stages as plain calls (docs/testing.md): p0 holds a finance ticket
    but pays with money (the ticket goes back to promotions at the start); p1 rebuys (a second
    rebuy is `rebuy_limit`); round 1 knocks out p0 and p3 tied on chips (they share ranks 3-4),
    the final pays the prizes. Then p3 enters a second tournament with a ticket, p1 unregisters,
    and the start below the minimum cancels it: p2's entry back to its buckets, the used ticket
    back to promotions. A third: p2 enters with its ticket and the tournament starts (the ticket
    spent once: into the entry, not back to promotions too), then is cancelled while running."""
    state = ApiMachine()
    state.players_arrive()
    p0, p1, p2, p3 = (f"{state.run}-p{n}" for n in range(4))
    slug = state.tournament_scheduled(p0, [(p0, True), (p1, False), (p2, False), (p3, False)])
    state.balances_agree()
    state.tournament_start(slug, None)
    state.tournament_round_one(slug, [p1, p1, p0], [p1, p2, p0, p3], [300, 300])
    state.balances_agree()
    state.tournament_final(slug, [p2, p1])
    state.balances_agree()
    slug = state.tournament_scheduled(p3, [(p3, False), (p2, False), (p1, False)])
    state.tournament_start(slug, p1)
    state.balances_agree()
    slug = state.tournament_scheduled(p2, [(p2, False), (p0, False), (p1, False)])
    state.tournament_start(slug, None)
    assert state.lobby.tournaments[slug].status == "running"
    state.balances_agree()  # p2's ticket spent on its entry, not lapsed as well at the start
    state.tournament_cancel(slug)
    state.teardown()


def test_bonus_lots_spent_by_the_bucket_order_agree_with_the_model(world):
    """Bonus first, at most the cap: p1's lot of 3.33 goes whole into a points stake (the cap
    10.96 of 109.60), p2's 30.00 gives 10.96; the deal (p1 a middle drop, p2 a lost hand)
    charges each loss to bonus rounded down (54.80 x 3.33 / 109.60 = 1.665: 1.66), the rest by
    largest remainder; the winner withdraws a tenth (no TDS: its net winnings are below 0); a
    pool cancelled gives the bonus back; a tournament entry takes 3.73 of bonus (10 % of
    37.33) and its cancel gives it back."""
    state = ApiMachine()
    state.players_arrive()
    p1, p2 = (f"{state.run}-p{n}" for n in (1, 2))
    state.bonus_credit(p1, Decimal("3.33"))
    state.bonus_credit(p2, Decimal("30.00"))
    state.open_game("sim-points", {0, 1, 2})
    (game_id,) = state.open_games()
    state.deal_one(game_id, 1, [("middle_drop", False), ("lost", False)], True)
    state.balances_agree()
    state.withdraw_one(f"{state.run}-p0", 10)  # a tenth of the winner's: no TDS (net < 0)
    state.open_game("sim-pool", {1, 2})
    (game_id,) = state.open_games()
    state.cancel_one(game_id)
    slug = state.tournament_scheduled(None, [(p1, False), (p2, False)])
    state.balances_agree()
    state.tournament_cancel(slug)
    state.teardown()


def test_deposit_limits_and_self_exclusion_agree_with_the_model(world):
    """p0's daily limit of 300.00 refuses 30.00 more after its 280.00 (409 `deposit_limit`); a
    raise to 500.00 waits while a monthly 290.00 counts at once (10.00 reaches it exactly), and
    limits lifted wait too (1.00 more is refused); p2
    excludes itself: a deposit, a points game and a registration are 409 `self_excluded`, and
    nothing moves."""
    state = ApiMachine()
    state.players_arrive()
    state.deposit_limits(0, (Decimal("300.00"), None), Decimal("30.00"))
    state.deposit_limits(0, (Decimal("500.00"), Decimal("290.00")), Decimal("10.00"))
    state.deposit_limits(0, (None, None), Decimal("1.00"))
    state.balances_agree()
    state.tournament_scheduled(None, [(f"{state.run}-p1", False)])
    state.self_exclusion(2, 30)
    state.balances_agree()
    state.teardown()


@pytest.mark.soak
def test_real_money_switched_off_and_back_agrees_with_the_model(world):
    """p0 wins a points game of p1; a pool of p0, p2 and p3 and a best of 2 of p1 and p2 open.
    Real money off (the service restarted): a deposit and a game refused, a chips game played,
    the games already open each settle a deal, p0 takes out its winnings and half its deposit
    (TDS on the year's net). Real money on again (restarted): a deposit credited, a best of 2
    of p0 and p3 plays a deal, a withdrawal beyond the winnings is refused (winnings only
    again), and the reconciliation is clean."""
    state = SoakMachine()
    state.players_arrive()
    p0 = f"{state.run}-p0"
    for slug, seats in (("sim-points", {0, 1}), ("sim-pool", {0, 2, 3}), ("sim-deals", {1, 2})):
        state.open_game(slug, seats)
        if slug == "sim-points":
            state.deal_one(list(state.books.games)[-1], 0, [("lost", False)], True)
    assert len(state.open_games()) == 2, state.books.games
    state.real_money_off_and_on()
    (refund,) = state.books.withdrawals.values()
    assert refund.from_deposit > 0, refund  # the deposit after the winnings
    state.open_game("sim-deals", {0, 3})
    state.deal_one(list(state.books.games)[-1], 1, [("lost", False)], True)
    state.withdraw_amount(p0, state.books.players[p0].winnings + 1)  # insufficient_funds
    kinds = Counter(kind(step) for step in world.log)
    assert kinds["fault:real-money-off"] == kinds["fault:real-money-on"] == 1, kinds
    assert world.real_money == "on"
    state.teardown()
