"""Tournament endpoints' input (shape only, unknown fields refused; the services judge the
content) and the tournament's representation `T`, with output serializers documenting it."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from django.db.models import QuerySet
from rest_framework import serializers

from rummy_ledger.api.fields import (
    ExternalIdField,
    StrictCharField,
    StrictIntegerField,
    StrictSerializer,
)
from rummy_ledger.api.paging import NEXT
from tournaments.models import Registration, Ticket, Tournament, TournamentRound
from tournaments.payouts import ZERO, prize_runs, rank_prizes, tournament_pool
from tournaments.tournaments.services.entries import paid_by_bucket, registered
from tournaments.tournaments.services.setup import terms_of
from tournaments.tournaments.services.tickets import seat_value
from tournaments.tournaments.terms import (
    MAX_CHIPS,
    MAX_PLAYERS,
    TABLE_SIZE_MAX,
    TournamentTerms,
)
from wallets.models import CHIPS
from wallets.money.amounts import amount_text
from wallets.services.real_money import real_money_here

MAX_TABLES = MAX_PLAYERS // 2


class PlayerIn(StrictSerializer):
    player = ExternalIdField(help_text="The player's external id.")


class RegistrationIn(PlayerIn):
    pay_with = serializers.ChoiceField(
        choices=["money"],
        required=False,
        help_text='"money": pay from the buckets even when holding a ticket (kept).',
    )


class StandingIn(StrictSerializer):
    player = ExternalIdField(help_text="The player's external id.")
    position = StrictIntegerField(
        min_value=1, max_value=TABLE_SIZE_MAX, help_text="1 to k at the table, each once."
    )
    chips = StrictIntegerField(min_value=0, max_value=MAX_CHIPS, help_text="Chips at the end.")


class TableIn(StrictSerializer):
    table = StrictCharField(max_length=64, help_text="The table's name.")
    standings = serializers.ListField(
        child=StandingIn(), min_length=1, max_length=TABLE_SIZE_MAX, help_text="Its players."
    )


class RoundIn(StrictSerializer):
    tables = serializers.ListField(
        child=TableIn(), min_length=1, max_length=MAX_TABLES, help_text="Every table of the round."
    )


def tournaments_rendered(tournaments: Sequence[Tournament]) -> dict[int, dict[str, Any]]:
    """Tournaments as `GET /tournaments/{slug}` answers them, as the service just saved them:
    the data of the `tournament.finished` and `tournament.cancelled` events."""
    return {t.pk: tournament_out(t) for t in tournaments}


def tournament_out(tournament: Tournament) -> dict[str, Any]:
    terms = terms_of(tournament)
    players = registered(tournament)
    collected, fee, pool, overlay, count = _money_figures(tournament, terms, players)
    cancelled = tournament.status == Tournament.Status.CANCELLED
    seat = seat_value(tournament)
    prizes = [] if cancelled else prize_runs(rank_prizes(pool, terms.prizes, seat))
    stored = {r.number: r for r in TournamentRound.objects.filter(tournament=tournament)}
    rounds = _rounds_out(tournament, terms, stored, players)
    results = _results_out(players) if tournament.status == Tournament.Status.FINISHED else []
    real_money = real_money_here()
    available = tournament.currency == CHIPS or real_money.available
    return {
        "slug": tournament.slug,
        "name": tournament.name,
        "status": tournament.status,
        "currency": tournament.currency,
        "entry_fee": amount_text(tournament.entry_fee),
        "fee_percent": amount_text(tournament.fee_percent),
        "guarantee": amount_text(tournament.guarantee),
        "min_players": tournament.min_players,
        "max_players": tournament.max_players,
        "table_size": tournament.table_size,
        "players": count,
        "collected": amount_text(collected),
        "fee": amount_text(fee),
        "prize_pool": amount_text(ZERO if cancelled else pool),
        "overlay": amount_text(overlay),
        "prizes": [
            {"rank_from": a, "rank_to": b, "amount": amount_text(amount)} for a, b, amount in prizes
        ],
        "round": tournament.round if tournament.status == Tournament.Status.RUNNING else None,
        "rounds": rounds,
        "results": results,
        "settled": all(r.status == TournamentRound.Status.SETTLED for r in stored.values()),
        "available": available,
        "unavailable_reason": None if available else real_money.reason,
    }


def _money_figures(
    tournament: Tournament, terms: TournamentTerms, players: QuerySet[Registration]
) -> tuple[Decimal, Decimal, Decimal, Decimal, int]:
    """Collected, fee, prize pool, overlay and the players counted: as stored once the
    tournament has ended, else as they stand with the players registered now."""
    if tournament.status in (Tournament.Status.FINISHED, Tournament.Status.CANCELLED):
        count = tournament.registrations.exclude(status="unregistered").count()
        return (
            tournament.collected,
            tournament.fee,
            tournament.prizes_paid,
            tournament.overlay,
            count,
        )
    rows = list(players.values_list("entry", "rebuy_total"))
    collected = sum((e + r for e, r in rows), ZERO)
    figures = tournament_pool(
        collected=collected, fee_percent=terms.fee_percent, guarantee=terms.guarantee
    )
    return figures.collected, figures.fee, figures.prize_pool, figures.overlay, len(rows)


def _results_out(players: QuerySet[Registration]) -> list[dict[str, Any]]:
    """A finished tournament's ranks and prizes, best first."""
    return [
        {"player": ext, "rank": rank, "prize": amount_text(prize)}
        for ext, rank, prize in players.order_by("rank", "player__external_id").values_list(
            "player__external_id", "rank", "prize"
        )
    ]


def _rounds_out(
    tournament: Tournament,
    terms: TournamentTerms,
    stored: dict[int, TournamentRound],
    players: QuerySet[Registration],
) -> list[dict[str, Any]]:
    """Every round of the terms: as stored, playing (the current one), or pending."""
    still_in = players.filter(out_round__isnull=True).count() if tournament.round else None
    rounds = []
    for number in range(1, len(terms.rounds) + 1):
        result = stored.get(number)
        if result is not None:
            rounds.append(
                {
                    "round": number,
                    "status": result.status,
                    "entrants": result.entrants,
                    "qualified": result.qualified,
                }
            )
        elif tournament.status == Tournament.Status.RUNNING and number == tournament.round:
            rounds.append(
                {"round": number, "status": "playing", "entrants": still_in, "qualified": None}
            )
        else:
            rounds.append(
                {"round": number, "status": "pending", "entrants": None, "qualified": None}
            )
    return rounds


def registration_out(registration, players: int) -> dict[str, Any]:
    return {
        "tournament": registration.tournament.slug,
        "player": registration.player.external_id,
        "paid": paid_by_bucket(registration),
        "players": players,
    }


# --- output documentation -------------------------------------------------------------------

Amount = serializers.CharField  # a decimal string such as "500.00"


class TournamentPrizeOut(serializers.Serializer):
    rank_from = serializers.IntegerField(help_text="The first rank of the run.")
    rank_to = serializers.IntegerField(help_text="The last rank of the run.")
    amount = Amount(help_text="Each of these ranks' prize at the current pool.")


class TournamentRoundOut(serializers.Serializer):
    round = serializers.IntegerField(help_text="The round's number, 1 first.")
    status = serializers.ChoiceField(
        choices=["pending", "playing", "stored", "settled"],
        help_text="pending, playing (current), stored (results in), settled (by the task).",
    )
    entrants = serializers.IntegerField(allow_null=True, help_text="Players in the round.")
    qualified = serializers.IntegerField(
        allow_null=True, help_text="Players it sent on (0 for the final; null before results)."
    )


class TournamentResultOut(serializers.Serializer):
    player = serializers.CharField(help_text="The player's external id.")
    rank = serializers.IntegerField(help_text="Players tied on chips show the first rank shared.")
    prize = Amount(help_text="What the player won.")


class TournamentOut(serializers.Serializer):
    slug = serializers.CharField(help_text="The tournament's id.")
    name = serializers.CharField(help_text="Its name.")
    status = serializers.ChoiceField(
        choices=Tournament.Status.choices, help_text="registering, running, finished, cancelled."
    )
    currency = serializers.CharField(help_text="INR or CHP (practice chips).")
    entry_fee = Amount(help_text="0: a freeroll.")
    fee_percent = Amount(help_text="The platform's fee on entries and rebuys.")
    guarantee = Amount(help_text="The smallest prize pool.")
    min_players = serializers.IntegerField(help_text="Fewer at the start: cancelled.")
    max_players = serializers.IntegerField(help_text="Seats.")
    table_size = serializers.IntegerField(help_text="Most players at a table (2 to 6).")
    players = serializers.IntegerField(help_text="Registered.")
    collected = Amount(help_text="Entries + rebuys.")
    fee = Amount(help_text="fee_percent of collected.")
    prize_pool = Amount(help_text="max(guarantee, collected - fee).")
    overlay = Amount(help_text="What the platform adds to reach the guarantee.")
    prizes = TournamentPrizeOut(many=True, help_text="One row per run of equal prizes.")
    round = serializers.IntegerField(allow_null=True, help_text="The current round, or null.")
    rounds = TournamentRoundOut(many=True, help_text="Every round of the tournament.")
    results = TournamentResultOut(many=True, help_text="When finished.")
    settled = serializers.BooleanField(help_text="No round waits for its settlement.")
    available = serializers.BooleanField(help_text="False: real money is off (cash only).")
    unavailable_reason = serializers.CharField(allow_null=True, help_text="Why not available.")


class TournamentsOut(serializers.Serializer):
    tournaments = TournamentOut(many=True, help_text="Those not finished or cancelled.")


class RegistrationOut(serializers.Serializer):
    tournament = serializers.CharField(help_text="The tournament's slug.")
    player = serializers.CharField(help_text="The player's external id.")
    paid = serializers.DictField(
        child=Amount(), help_text='bucket -> amount; "ticket" -> its value when paid with one'
    )
    players = serializers.IntegerField(help_text="Registered now.")


class TicketOut(serializers.Serializer):
    id = serializers.IntegerField(help_text="The ticket's id.")
    tournament = serializers.CharField(help_text="The slug of the tournament it enters.")
    value = Amount(help_text="Its entry fee.")
    currency = serializers.CharField(help_text="INR or CHP (practice chips).")
    status = serializers.ChoiceField(
        choices=Ticket.Status.choices,
        help_text="active (held), used (entered with), refunded (value paid back), expired.",
    )
    source = serializers.ChoiceField(
        choices=Ticket.Source.choices, help_text="satellite: won in one."
    )
    expires_at = serializers.DateTimeField(
        help_text="When it stops entering its tournament: its tournament's registration close, "
        "or earlier for a ticket finance issued with its own expiry (then `expired`, its value "
        "back to promotions)."
    )


class TicketsOut(serializers.Serializer):
    tickets = TicketOut(many=True, help_text="For this client's tournaments, oldest first.")
    next = serializers.CharField(allow_null=True, help_text=NEXT)


def ticket_out(ticket: Ticket) -> dict[str, Any]:
    target = ticket.tournament
    return {
        "id": ticket.pk,
        "tournament": target.slug,
        "value": amount_text(ticket.value),
        "currency": target.currency,
        "status": ticket.status,
        "source": ticket.source,
        "expires_at": ticket.expiry,
    }


class RebuyOut(RegistrationOut):
    rebuys = serializers.IntegerField(help_text="The player's rebuys so far.")


class RoundAcceptedOut(serializers.Serializer):
    tournament = serializers.CharField(help_text="The tournament's slug.")
    round = serializers.IntegerField(help_text="The round stored.")
    status = serializers.ChoiceField(
        choices=TournamentRound.Status.choices, help_text="stored, then settled by the task."
    )
