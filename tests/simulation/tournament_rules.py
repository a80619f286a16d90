"""The state machine's tournament rules (a base of `ApiMachine`, tests/simulation/machine.py):
one rule walks a cash tournament through its life a stage a step, over the lobby's API, each
answer held against tests/simulation/tournament_model.py. docs/testing.md, "The state machine"."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

from django.utils import timezone
from hypothesis import strategies as st
from hypothesis.stateful import precondition, rule

from tests.simulation.tournament_model import Tournament
from tests.tournaments.tournament_builders import scheduled, table
from tests.wallets.payments import finance_staff
from tournaments.models import TicketIssue
from tournaments.models import Tournament as TournamentRow
from tournaments.tasks import settle_waiting_rounds
from tournaments.tournaments.services.tickets import ticket_issue_propose
from wallets.services.proposals import proposal_decide

# The machine's tournament: two rounds (the first two of round 1's one table play the final),
# rebuys in round 1, three paid ranks (players tied on chips in round 1 share ranks 3-4), a
# guarantee a full field's entries less the fee exceeds (an overlay when three enter, none at
# four), amounts whose fee is seldom a whole paisa.
TERMS = {
    "entry_fee": "37.33", "fee_percent": "13.33", "guarantee": "110.00",
    "bonus_cap_percent": "10.00", "min_players": 3, "max_players": 4, "table_size": 6,
    "rounds": [{"qualify_top": 2}, {"final": True}],
    "rebuy": {"price": "21.11", "max_per_player": 1, "until_round": 1},
    "prizes": [
        {"ranks": "1", "percent": "50.00"}, {"ranks": "2", "percent": "30.01"},
        {"ranks": "3", "percent": "19.99"},
    ],
}  # fmt: skip
CHIPS = st.sampled_from([100, 300, 300])  # knocked-out players often tie
MAX_TOURNAMENTS = 2  # a run's


def shown(paid: dict[str, Decimal]) -> dict[str, str]:
    """A registration's `paid` as the API shows it: the buckets that gave something."""
    return {b: str(v) for b, v in paid.items() if v}


def summed(entries: list[dict[str, Decimal]]) -> dict[str, Decimal]:
    buckets = dict.fromkeys(b for e in entries for b in e)
    return {b: sum((e.get(b, Decimal(0)) for e in entries), Decimal(0)) for b in buckets}


class TournamentRules:
    """Mixed into ApiMachine: uses its `world`, `books`, `lobby`, `step`, `write`, `next_id`."""

    def tournament_now(self) -> str | None:
        """The run's tournament not yet over, if any."""
        live = ("registering", "running")
        return next((s for s, t in self.lobby.tournaments.items() if t.status in live), None)

    def may_play_tournament(self) -> bool:
        return self.tournament_now() is not None or len(self.lobby.tournaments) < MAX_TOURNAMENTS

    @precondition(lambda self: self.may_play_tournament())
    @rule(data=st.data(), cancel=st.sampled_from([False, False, False, True]))
    def tournament(self, data, cancel):
        """The run's tournament one stage on: scheduled (perhaps a finance ticket for a player)
        and registered into; one unregistered and started; rebuys and round 1; the final and its
        prizes. Or, drawn, cancelled while registering or in round 1."""
        slug = self.tournament_now()
        players = st.sampled_from(self.player_ids())
        if slug is None:
            ticket = data.draw(st.none() | players, label="a ticket for")
            entrants = data.draw(st.lists(st.tuples(players, st.booleans()), max_size=4))
            self.tournament_scheduled(ticket, entrants)
            return
        t = self.lobby.tournaments[slug]
        if cancel:
            self.tournament_cancel(slug)
        elif t.status == "registering":
            self.tournament_start(slug, data.draw(st.none() | players, label="unregisters"))
        elif t.round == 1:
            rebuys = data.draw(st.lists(players, max_size=3), label="rebuys")
            order = data.draw(st.permutations(sorted(t.paid)), label="round 1 positions")
            chips = sorted((data.draw(CHIPS) for _ in order[2:]), reverse=True)
            self.tournament_round_one(slug, rebuys, order, chips)
        else:
            self.tournament_final(slug, data.draw(st.permutations(t.qualified), label="final"))

    def player_ids(self) -> list[str]:
        return sorted(self.books.players)

    def tournament_scheduled(self, ticket: str | None, entrants: list[tuple[str, bool]]) -> str:
        """A tournament made as the tests make one, perhaps a finance ticket for a player, and
        registrations (`True`: paying with money though holding a ticket)."""
        slug = self.next_id("t").lower()
        closes = (timezone.now() + timedelta(hours=1)).isoformat()
        spec = {**TERMS, "slug": slug, "client": self.world.games.client.name}
        row = scheduled(**spec, registration_closes_at=closes)
        self.lobby.tournaments[slug] = Tournament(
            entry_fee=Decimal(TERMS["entry_fee"]), fee_percent=Decimal(TERMS["fee_percent"]),
            guarantee=Decimal(TERMS["guarantee"]), min_players=TERMS["min_players"],
            bonus_cap=Decimal(TERMS["bonus_cap_percent"]),
            rebuy_price=Decimal(TERMS["rebuy"]["price"]),
            rebuys_max=TERMS["rebuy"]["max_per_player"],
            prizes=[Decimal(p["percent"]) for p in TERMS["prizes"]],
        )  # fmt: skip
        self.step("tournament", slug, "ticket", ticket)
        if ticket is not None:
            self.ticket_issued(row, ticket)
        self.rival_tournament(slug)
        for player, pay_with_money in entrants:
            self.register_one(slug, player, pay_with_money)
        return slug

    def ticket_issued(self, tournament: TournamentRow, player: str) -> None:
        """Finance's ticket, as tests issue one: an operator proposes it, an approver approves."""
        operator, approver = finance_staff()
        issue = ticket_issue_propose(
            proposed_by=operator,
            tournament=tournament,
            players=[player],
            expires_at=timezone.now() + timedelta(minutes=50),
            reason="the state machine",
        )
        proposal_decide(model=TicketIssue, proposal_id=issue.pk, decided_by=approver, approve=True)
        self.lobby.ticket_issue(tournament.slug, player)

    def rival_tournament(self, slug: str) -> None:
        """Another client's tournament is 404 to read and to register into."""
        assert self.world.rival.send("GET", f"tournaments/{slug}").status_code == 404
        player = self.player_ids()[0]
        r = self.world.rival.post(f"tournaments/{slug}/registrations", {"player": player})
        assert r.status_code == 404, r.text

    def register_one(self, slug: str, player: str, pay_with_money: bool) -> None:
        body = {"player": player} | ({"pay_with": "money"} if pay_with_money else {})
        expected = self.lobby.register(slug, player, pay_with_money)
        self.step("register", slug, player, "money" if pay_with_money else "", expected)
        r = self.write(self.world.games, f"tournaments/{slug}/registrations", body)
        if isinstance(expected, str):
            assert (r.status_code, r.json()["error"]["code"]) == (409, expected), r.text
            return
        assert r.status_code == 201, r.text
        players = len(self.lobby.tournaments[slug].paid)
        assert (r.json()["paid"], r.json()["players"]) == (shown(expected), players), r.text

    def tournament_start(self, slug: str, player: str | None) -> None:
        """`player` unregistered (or refused `not_registered`), then the start: running, or
        cancelled below the minimum with every entry refunded."""
        if player is not None:
            self.unregister_one(slug, player)
        self.lobby.start(slug)
        t = self.lobby.tournaments[slug]
        self.step("start", slug, t.status)
        r = self.write(self.world.games, f"tournaments/{slug}/start", {})
        assert (r.status_code, r.json().get("status")) == (200, t.status), r.text

    def unregister_one(self, slug: str, player: str) -> None:
        refusal = self.lobby.unregister(slug, player)
        self.step("unregister", slug, player, refusal or "taken")
        r = self.world.games.send("DELETE", f"tournaments/{slug}/registrations/{player}")
        if refusal is None:
            assert r.status_code == 200, r.text
        else:
            assert (r.status_code, r.json()["error"]["code"]) == (409, refusal), r.text

    def tournament_round_one(self, slug: str, rebuys: list[str], order: list[str], chips) -> None:
        """Rebuys, then round 1 at one table in `order`: the first two play the final, the others
        are knocked out with `chips` (most first)."""
        for player in rebuys:
            expected = self.lobby.rebuy(slug, player)
            self.step("rebuy", slug, player, expected)
            r = self.write(self.world.games, f"tournaments/{slug}/rebuys", {"player": player})
            if isinstance(expected, str):
                assert (r.status_code, r.json()["error"]["code"]) == (409, expected), r.text
            else:  # the registration's shape: all it paid, entry and rebuys
                entries = self.lobby.tournaments[slug].paid[player]
                got = (r.status_code, r.json()["paid"], r.json()["rebuys"])
                assert got == (201, shown(summed(entries)), len(entries) - 1), r.text
        t = self.lobby.tournaments[slug]
        rows = [(p, 1 + i, 900 - i) for i, p in enumerate(order[:2])]
        rows += [(p, 3 + i, c) for i, (p, c) in enumerate(zip(order[2:], chips, strict=True))]
        t.round, t.knocked_out, t.qualified = 2, {p: c for p, _, c in rows[2:]}, list(order[:2])
        self.step("round", slug, 1, rows)
        self.round_post(slug, 1, rows)
        self.tournament_settled(slug, lambda got: got["round"] == 2)

    def tournament_final(self, slug: str, final: list[str]) -> None:
        """A rebuy too late (`rebuy_closed`), then the final in the order `final`: the prizes as
        the model pays them."""
        t = self.lobby.tournaments[slug]
        player = t.qualified[0]
        self.step("rebuy", slug, player, "rebuy_closed")
        r = self.write(self.world.games, f"tournaments/{slug}/rebuys", {"player": player})
        assert (r.status_code, r.json()["error"]["code"]) == (409, "rebuy_closed"), r.text
        self.step("final", slug, final)
        rows = [(p, 1 + i, 0) for i, p in enumerate(final)]
        self.round_post(slug, 2, rows)
        got = self.tournament_settled(slug, lambda got: got["status"] == "finished")
        want = self.lobby.finish(slug, final, t.knocked_out)
        amounts = {k: Decimal(got[k]) for k in ("collected", "fee", "prize_pool")}
        assert amounts == {k: want[k] for k in amounts}, (got, want)
        prizes = {r["player"]: Decimal(r["prize"]) for r in got["results"]}
        assert prizes == {p: want["prizes"].get(p, Decimal("0.00")) for p in prizes}, (got, want)

    def round_post(self, slug: str, number: int, rows: list[tuple[str, int, int]]) -> None:
        body = {"tables": [table("T", *rows)]}
        r = self.write(self.world.games, f"tournaments/{slug}/rounds/{number}", body)
        assert r.status_code == 202, r.text

    def tournament_cancel(self, slug: str) -> None:
        self.lobby.cancel(slug)
        self.step("cancel-tournament", slug)
        r = self.write(self.world.games, f"tournaments/{slug}/cancel", {})
        assert (r.status_code, r.json()["status"]) == (200, "cancelled"), r.text

    def tournament_settled(self, slug: str, done) -> dict:
        """Wait until the posted round is settled (`World.settlement_waited`): the tournament as
        the API then shows it."""
        seen = {}

        def read():
            seen.update(self.world.games.send("GET", f"tournaments/{slug}").json())
            return seen.get("settled") and done(seen)

        assert self.world.settlement_waited(read, settle_waiting_rounds), f"{slug}: {seen}"
        return seen
