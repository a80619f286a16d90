"""The payment gateway's part of the demo: deposits (GST taken), KYC, and withdrawals paid or
failed, over the REST API like the real gateway. Finance's approval of the withdrawals that
wait for it is not HTTP (it is admin work): the caller passes it in."""

from __future__ import annotations

import hashlib
import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from rummy_ledger.dev.demo.simulator import Http
from wallets.money.amounts import ZERO


@dataclass
class MoneyTally:
    deposits: int = 0
    deposited: Decimal = ZERO
    gst: Decimal = ZERO
    credited: Decimal = ZERO
    verified: int = 0
    approved_by_finance: int = 0
    paid: int = 0
    paid_out: Decimal = ZERO
    tds: Decimal = ZERO
    failed: int = 0
    returned: Decimal = ZERO


def pan_for(player: str) -> str:
    """A well-formed PAN of the player's own (five letters, four digits, one letter)."""
    digest = hashlib.sha256(player.encode()).digest()
    letters = [string.ascii_uppercase[b % 26] for b in digest[:6]]
    digits = int.from_bytes(digest[6:10]) % 10_000
    return "".join(letters[:5]) + f"{digits:04d}" + letters[5]


class PaymentGateway:
    def __init__(self, http: Http, *, seed: int | None = None):
        self.http = http
        self.rng = random.Random(seed)
        self.tally = MoneyTally()

    def fund(self, players: list[str], amount: str = "5000.00", region: str = "") -> None:
        """A deposit per player; with the players' `region` when given (the real-money switch
        reads it where real money is restricted)."""
        for p in players:
            deposit = {"amount": amount, "reference": f"sim-{p}"}
            if region:
                deposit["region"] = region
            body = self.http.post(f"players/{p}/deposits", deposit)
            self.tally.deposits += 1
            self.tally.deposited += Decimal(body["amount"])
            self.tally.gst += Decimal(body["gst"])
            self.tally.credited += Decimal(body["credited"])

    def verify(self, players: list[str]) -> None:
        for p in players:
            self.http.post(
                f"players/{p}/kyc",
                {"pan": pan_for(p), "status": "verified", "reference": f"sim-kyc-{p}"},
            )
            self.tally.verified += 1

    def cash_out(self, players: list[str], approve: Callable[[int], None]) -> None:
        """Every player with winnings withdraws part of them; finance approves the ones that
        wait; the gateway reports most paid and every third failed."""
        for n, p in enumerate(players):
            winnings = Decimal(
                self.http.get(f"players/{p}/wallet")["balances"]["winnings"]["amount"]
            )
            amount = (winnings * Decimal(self.rng.randint(30, 90)) / 100).quantize(Decimal("0.01"))
            if amount < 1:
                continue
            w = self.http.post(
                f"players/{p}/withdrawals", {"amount": f"{amount}", "reference": f"sim-wd-{p}"}
            )
            if w["status"] == "requested":
                approve(w["withdrawal_id"])
                self.tally.approved_by_finance += 1
            if n % 3 == 2:
                self.http.post(f"withdrawals/{w['withdrawal_id']}/failed", {"reason": "bank"})
                self.tally.failed += 1
                self.tally.returned += amount
            else:
                done = self.http.post(
                    f"withdrawals/{w['withdrawal_id']}/paid",
                    {"gateway_reference": f"sim-pay-{p}"},
                )
                self.tally.paid += 1
                self.tally.paid_out += Decimal(done["payout"])
                self.tally.tds += Decimal(done["tds"])

    def summary(self) -> list[str]:
        t = self.tally
        return [
            f"Deposits: {t.deposits}, {t.deposited} INR paid = {t.credited} credited + "
            f"{t.gst} GST (at the rate in force)",
            f"KYC: {t.verified} verified; withdrawals: {t.paid} paid ({t.paid_out} INR out, "
            f"{t.tds} TDS withheld), {t.failed} failed ({t.returned} INR back to winnings), "
            f"{t.approved_by_finance} approved by finance",
        ]
