"""Withdrawals under real concurrency (threads with their own connections): one player's whole
winnings withdrawn 20 times at once, a withdrawal racing a game entry, deposits and KYC racing."""

import threading
import uuid
from collections import Counter
from decimal import Decimal
from unittest import mock

import pytest
from djmoney.money import Money
from rest_framework.test import APIClient

from rummy_ledger.api.keys import api_client_create
from tests.builders import template
from tests.concurrency import run_in_threads
from tests.wallets.invariants import ledger_violations
from tests.wallets.payments import verified, won
from tournaments.games.services.opening import game_open
from wallets.errors import InsufficientFunds, LedgerBusy
from wallets.models import CASH, Account, Player, Withdrawal
from wallets.services import withdrawals
from wallets.services.withdrawals import withdrawal_request

pytestmark = pytest.mark.django_db(transaction=True)


def gateway_api() -> APIClient:
    _, key = api_client_create(name=f"gateway-{uuid.uuid4().hex[:6]}", scopes=["payments"])
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Api-Key {key}")
    return api


def wallet(player: str, bucket: str) -> Decimal:
    return Account.objects.get(code=f"player:{player}:{bucket}").balance.amount


def test_twenty_concurrent_withdrawals_of_the_whole_winnings_accept_exactly_one():
    verified("w1")
    won("w1", "5000.00")
    api = gateway_api()

    def work(n: int):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=api._credentials["HTTP_AUTHORIZATION"])
        response = client.post(
            "/api/v1/players/w1/withdrawals",
            {"amount": "5000.00", "reference": f"wd-{n}"},
            format="json",
            HTTP_IDEMPOTENCY_KEY=f"key-{n}",
        )
        return response.status_code, response.json().get("error", {}).get("code")

    results = run_in_threads(work, 20)

    assert [r for r in results if isinstance(r, Exception)] == []
    outcome = Counter(results)
    assert outcome[(201, None)] == 1, outcome
    refused = {key: n for key, n in outcome.items() if key != (201, None)}
    assert set(refused) <= {(409, "insufficient_funds"), (409, "ledger_busy")}, outcome
    assert Withdrawal.objects.count() == 1
    assert (wallet("w1", "winnings"), wallet("w1", "pending")) == (0, Decimal("5000.00"))
    assert ledger_violations() == []


def test_a_withdrawal_racing_game_entries_never_overdraws():
    template("pool", "pool101", entry_fee=Decimal("100.00"), entry_buckets=["winnings"])
    client, _ = api_client_create(name="game-server", scopes=["games"])
    rounds = 6
    for r in range(rounds):
        verified(f"r{r}")
        won(f"r{r}", "100.00")  # exactly one of: the entry, or the withdrawal
        won(f"o{r}", "100.00")

    def work(n: int):
        r, entry = divmod(n, 2)
        try:
            if entry:
                game_open(
                    client=client, game_id=f"g{r}", template_slug="pool", players=[f"r{r}", f"o{r}"]
                )
            else:
                withdrawal_request(
                    player_external_id=f"r{r}", amount=Money("100.00", CASH), reference=f"wd-{r}"
                )
            return "done"
        except (InsufficientFunds, LedgerBusy):  # short (or, rarely, a lock wait ran out)
            return "refused"

    results = run_in_threads(work, 2 * rounds)

    assert [r for r in results if isinstance(r, Exception)] == []
    for r in range(rounds):
        pair = results[2 * r : 2 * r + 2]
        assert sorted(pair) == ["done", "refused"], pair
        assert wallet(f"r{r}", "winnings") == 0
        assert wallet(f"r{r}", "pending") in (0, Decimal("100.00"))
    assert ledger_violations() == []


def test_a_game_entry_between_reading_the_winnings_and_posting_is_caught():
    # given: the withdrawal has read 100.00 of winnings, and waits there (pinned interleaving)
    template("pool", "pool101", entry_fee=Decimal("60.00"), entry_buckets=["winnings"])
    client, _ = api_client_create(name="game-server", scopes=["games"])
    verified("w1")
    won("w1", "100.00")
    won("o1", "100.00")
    read, entered = threading.Event(), threading.Event()
    position = withdrawals.tax_position

    def position_then_wait(**kwargs):
        result = position(**kwargs)
        read.set()
        entered.wait(20)
        return result

    def withdraw(_n):
        with mock.patch.object(withdrawals, "tax_position", position_then_wait):
            try:
                return withdrawal_request(
                    player_external_id="w1", amount=Money("100.00", CASH), reference="wd-1"
                )
            except InsufficientFunds as exc:
                return exc

    thread_result: list = []
    thread = threading.Thread(target=lambda: thread_result.extend(run_in_threads(withdraw, 1)))
    thread.start()
    assert read.wait(20)

    # when: a game entry takes 60.00 of those winnings (it locks accounts, not the player)
    try:
        game_open(client=client, game_id="g1", template_slug="pool", players=["w1", "o1"])
    finally:
        entered.set()
        thread.join(30)

    # then: the withdrawal is refused by the ledger, naming the balance left; nothing moved
    (refused,) = thread_result
    assert isinstance(refused, InsufficientFunds), refused
    assert refused.details == {"bucket": "winnings", "balance": "40.00", "requested": "100.00"}
    assert not Withdrawal.objects.exists()
    assert (wallet("w1", "winnings"), wallet("w1", "pending")) == (Decimal("40.00"), 0)
    assert ledger_violations() == []


def test_two_players_verifying_one_pan_at_once_get_it_once():
    api = gateway_api()
    token = api._credentials["HTTP_AUTHORIZATION"]

    def work(n: int):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=token)
        response = client.post(
            f"/api/v1/players/k{n}/kyc",
            {"pan": "ABCDE1234F", "status": "verified", "reference": f"kyc-{n}"},
            format="json",
        )
        return response.status_code, response.json().get("error", {}).get("code")

    results = run_in_threads(work, 8)

    assert Counter(results) == Counter({(201, None): 1, (409, "pan_conflict"): 7}), results
    assert Player.objects.filter(pan="ABCDE1234F", kyc_status="verified").count() == 1


def test_concurrent_deposits_and_withdrawals_of_one_player_keep_the_books():
    verified("w1")
    won("w1", "1000.00")

    def work(n: int):
        if n % 2:
            from wallets.services.deposits import deposit_register

            return deposit_register(
                player_external_id="w1", amount=Money("128.00", CASH), reference=f"dep-{n}"
            ).credited
        try:
            w, _ = withdrawal_request(
                player_external_id="w1", amount=Money("100.00", CASH), reference=f"wd-{n}"
            )
            return w.tds.amount
        except LedgerBusy:
            return "busy"

    results = run_in_threads(work, 16)

    assert [r for r in results if isinstance(r, Exception)] == []
    made = Withdrawal.objects.count()
    assert wallet("w1", "winnings") == Decimal("1000.00") - 100 * made
    assert wallet("w1", "pending") == 100 * made
    assert ledger_violations() == []
