"""The lobby's part of the demo: tournaments played over the REST API with the demo lobby key.

Players register (with an entry fee, one of them unregisters again and is refunded), the lobby
starts the tournament, two players rebuy where rebuys are offered, each round's tables are
posted (shuffled seats, random chips; in every round before the final the two best knocked-out
players tie on chips, so they share the ranks they span) and the simulator waits for the prizes
to be settled. Then it checks the books from what the API answers: prizes + fee == collected +
overlay, and each player's balance moved by exactly prize - entry - rebuys."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from rummy_ledger.dev.demo.simulator import Lobby
from wallets.money.amounts import ZERO


@dataclass
class TournamentTally:
    slug: str
    currency: str
    status: str = ""
    players: int = 0
    unregistered: int = 0
    rebuys: int = 0
    collected: Decimal = ZERO
    fee: Decimal = ZERO
    overlay: Decimal = ZERO
    prizes: Decimal = ZERO
    tied: list[tuple[int, list[str]]] = field(default_factory=list)  # (rank, players)
    unbalanced: list[str] = field(default_factory=list)

    def line(self) -> str:
        out = f", {self.unregistered} unregistered (refunded)" if self.unregistered else ""
        ties = "; ".join(f"{len(p)} tied at rank {r} ({', '.join(p)})" for r, p in self.tied)
        return (
            f"{self.slug} ({self.currency}) {self.status}: {self.players} players{out}, "
            f"{self.rebuys} rebuys, collected {self.collected} + overlay {self.overlay} = "
            f"prizes {self.prizes} + fee {self.fee}" + (f"; {ties}" if ties else "")
        )


class TournamentLobby(Lobby):
    def play(self, slug: str, terms: dict[str, Any]) -> TournamentTally:
        """Play tournament `slug` (registering) to its settled prizes; `terms` are the rounds
        and rebuy it was scheduled with (`rummy_ledger.dev.demo.tournaments.DEMO_TOURNAMENTS`)."""
        path = f"tournaments/{slug}"
        t = self.http.get(path)
        tally = TournamentTally(slug, t["currency"])
        entrants = self.rng.sample(self.players, min(t["max_players"], len(self.players)))
        before = {p: self._balance(p, t["currency"]) for p in entrants}
        paid: dict[str, Decimal] = {}
        for p in entrants:
            paid[p] = _paid(self.http.post(f"{path}/registrations", {"player": p}))
        if Decimal(t["entry_fee"]) > 0:  # one changes their mind: the entry comes back
            gone = entrants.pop()
            self.http.delete(f"{path}/registrations/{gone}")
            paid[gone] = ZERO
            tally.unregistered = 1
        self.http.post(f"{path}/start")
        if terms["rebuy"]:
            for p in self.rng.sample(entrants, min(2, len(entrants))):
                paid[p] = _paid(self.http.post(f"{path}/rebuys", {"player": p}))
                tally.rebuys += 1
        alive = list(entrants)
        rounds = terms["rounds"]
        for number, rule in enumerate(rounds, start=1):
            tables, alive = self._round(alive, t["table_size"], rule)
            self.http.post(f"{path}/rounds/{number}", {"tables": tables})
        t = self._settled(path)
        self._record(tally, t, before, paid)
        return tally

    def _round(self, alive: list[str], size: int, rule: dict) -> tuple[list[dict], list[str]]:
        """A round's tables and who goes on. Before the final the two best knocked-out players
        tie on chips."""
        self.rng.shuffle(alive)
        count = -(-len(alive) // size)
        tables = []
        for n in range(count):
            seated = alive[n::count]
            chips = sorted(self.rng.sample(range(100, 20_000), len(seated)), reverse=True)
            standings = [
                {"player": p, "position": i, "chips": c}
                for i, (p, c) in enumerate(zip(seated, chips, strict=True), start=1)
            ]
            tables.append({"table": f"t{n + 1}", "standings": standings})
        rows = [s for table in tables for s in table["standings"]]
        if rule.get("final"):
            return tables, []
        if "qualify_top" in rule:
            on = [s for s in rows if s["position"] <= rule["qualify_top"]]
        else:
            on = [s for s in rows if s["chips"] >= rule["qualify_min_chips"]]
        going_on = [s["player"] for s in on]
        out = sorted((s for s in rows if s["player"] not in going_on), key=lambda s: -s["chips"])
        if len(out) >= 2:
            out[1]["chips"] = out[0]["chips"]
        return tables, going_on

    def _balance(self, player: str, currency: str) -> Decimal:
        balances = self.http.get(f"players/{player}/wallet")["balances"].values()
        return sum((Decimal(b["amount"]) for b in balances if b["currency"] == currency), ZERO)

    def _settled(self, path: str, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            t = self.http.get(path)
            if (t["settled"] and t["status"] == "finished") or time.monotonic() > deadline:
                return t
            time.sleep(0.05)

    def _record(self, tally: TournamentTally, t: dict, before: dict, paid: dict) -> None:
        tally.status, tally.players = t["status"], t["players"]
        tally.collected, tally.fee = Decimal(t["collected"]), Decimal(t["fee"])
        tally.overlay = Decimal(t["overlay"])
        prizes = {r["player"]: Decimal(r["prize"]) for r in t["results"]}
        tally.prizes = sum(prizes.values(), ZERO)
        ranks = Counter(r["rank"] for r in t["results"])
        tally.tied = [
            (rank, sorted(r["player"] for r in t["results"] if r["rank"] == rank))
            for rank, n in sorted(ranks.items())
            if n > 1
        ]
        if t["status"] != "finished":
            tally.unbalanced.append(f"{tally.slug}: {t['status']}, not finished")
        if tally.prizes + tally.fee != tally.collected + tally.overlay:
            tally.unbalanced.append(f"{tally.slug}: prizes + fee != collected + overlay")
        for p, was in before.items():
            moved = self._balance(p, tally.currency) - was
            if moved != prizes.get(p, ZERO) - paid[p]:
                tally.unbalanced.append(
                    f"{tally.slug}: {p}'s balance moved {moved}, not prize - entry - rebuys"
                )
        self.say(f"  {tally.line()}")


def _paid(registration: dict) -> Decimal:
    """What a registration has paid so far (entry and rebuys), from the lobby's answer."""
    return sum((Decimal(a) for a in registration["paid"].values()), ZERO)
