"""Lobby endpoints for tournaments: one view per operation; views translate, services decide."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response

from rummy_ledger.api.fields import StrictSerializer
from rummy_ledger.api.idempotency import IDEMPOTENCY_HEADER as IDEMPOTENCY
from rummy_ledger.api.idempotency import idempotent
from rummy_ledger.api.paging import (
    AFTER_PARAMETER,
    LIMIT_PARAMETER,
    PageQuery,
    page_answer,
    page_asked,
)
from rummy_ledger.api.schema import error_codes
from rummy_ledger.api.views import valid_data
from rummy_ledger.db import snapshot
from tournaments.errors import GameErrorCode as G
from tournaments.games.api.views import ESCROW, NOT_PAIRED, GamesScope
from tournaments.models import Tournament
from tournaments.tournaments.api import serializers as s
from tournaments.tournaments.services import entries, rounds, tickets
from wallets.errors import WalletErrorCode as W

# The refusals each operation's services can answer, beyond what any request can (see
# rummy_ledger.api.schema).
A_TOURNAMENT = {404: [G.TOURNAMENT_NOT_FOUND]}
ENTRY = {**A_TOURNAMENT, 403: NOT_PAIRED, 422: [W.BALANCE_OUT_OF_RANGE]}
STATE = {**A_TOURNAMENT, 409: [G.TOURNAMENT_STATE, W.LEDGER_BUSY], 422: [W.BALANCE_OUT_OF_RANGE]}


def _write(request, action, code=status.HTTP_200_OK, *, bodiless=False):
    """Run `action` once per Idempotency-Key; a `bodiless` write refuses any field it is sent,
    as every write refuses the fields it does not take."""

    def run():
        if bodiless:
            valid_data(StrictSerializer, request)
        return Response(action(), status=code)

    return idempotent(request, run)


SLUG = OpenApiParameter(
    "slug", str, OpenApiParameter.PATH, description="The tournament's slug (as scheduled)."
)
PLAYER = OpenApiParameter(
    "player", str, OpenApiParameter.PATH, description="The player's external id."
)
NUMBER = OpenApiParameter(
    "number", int, OpenApiParameter.PATH, description="The round's number: the current one."
)


class TournamentsView(GamesScope):
    @extend_schema(
        responses=s.TournamentsOut,
        summary="This client's tournaments not over",
        operation_id="v1_tournaments_list",  # the detail's GET would take the same name
    )
    def get(self, request):
        with snapshot():
            current = Tournament.objects.filter(client=request.auth).exclude(
                status__in=[Tournament.Status.FINISHED, Tournament.Status.CANCELLED]
            )
            return Response({"tournaments": [s.tournament_out(t) for t in current]})


class TournamentView(GamesScope):
    @extend_schema(
        responses=s.TournamentOut,
        parameters=[SLUG],
        summary="A tournament: pool, prizes, rounds, results",
        extensions=error_codes(A_TOURNAMENT),
    )
    def get(self, request, slug: str):
        with snapshot():
            tournament = entries.tournament_get(client=request.auth, slug=slug)
            return Response(s.tournament_out(tournament))


class RegistrationsView(GamesScope):
    @extend_schema(
        request=s.RegistrationIn,
        responses={201: s.RegistrationOut},
        parameters=[SLUG, IDEMPOTENCY],
        summary="Register a player: the entry taken like a game's",
        extensions=error_codes(
            {
                **ENTRY,
                409: [G.REGISTRATION_CLOSED, G.ALREADY_REGISTERED, G.TOURNAMENT_FULL, *ESCROW],
            }
        ),
    )
    def post(self, request, slug: str):
        def run():
            data = valid_data(s.RegistrationIn, request)
            registration = entries.registration_create(
                client=request.auth,
                slug=slug,
                player=data["player"],
                pay_with=data.get("pay_with", ""),
            )
            count = entries.players_count(registration.tournament)
            return s.registration_out(registration, count)

        return _write(request, run, status.HTTP_201_CREATED)


class PlayerTicketsView(GamesScope):
    @extend_schema(
        responses=s.TicketsOut,
        parameters=[AFTER_PARAMETER, LIMIT_PARAMETER],
        summary="A player's tickets for this client's tournaments, oldest first, cursor-paged",
    )
    def get(self, request, player_id: str):
        asked = page_asked(PageQuery, request)
        held = tickets.player_tickets(
            client=request.auth, player=player_id, after_id=asked.after_id, count=asked.count
        )
        return Response(page_answer("tickets", held, asked, s.ticket_out))


class RegistrationView(GamesScope):
    @extend_schema(
        request=None,
        responses=s.RegistrationOut,
        parameters=[SLUG, PLAYER, IDEMPOTENCY],
        summary="Unregister before the start: the entry back where it came from",
        extensions=error_codes(
            {
                **A_TOURNAMENT,
                409: [G.REGISTRATION_CLOSED, G.NOT_REGISTERED, W.LEDGER_BUSY],
                422: [W.BALANCE_OUT_OF_RANGE],
            }
        ),
    )
    def delete(self, request, slug: str, player: str):
        def run():
            registration = entries.registration_withdraw(
                client=request.auth, slug=slug, player=player
            )
            return s.registration_out(registration, entries.players_count(registration.tournament))

        return _write(request, run, bodiless=True)


class StartView(GamesScope):
    @extend_schema(request=None, responses=s.TournamentOut, parameters=[SLUG, IDEMPOTENCY],
                   summary="Close registration (cancelled below min_players)",
                   extensions=error_codes(STATE))  # fmt: skip
    def post(self, request, slug: str):
        return _write(
            request,
            lambda: s.tournament_out(rounds.tournament_start(client=request.auth, slug=slug)),
            bodiless=True,
        )


class CancelView(GamesScope):
    @extend_schema(request=None, responses=s.TournamentOut, parameters=[SLUG, IDEMPOTENCY],
                   summary="Cancel: every entry and rebuy refunded",
                   extensions=error_codes(STATE))  # fmt: skip
    def post(self, request, slug: str):
        return _write(
            request,
            lambda: s.tournament_out(rounds.tournament_cancel(client=request.auth, slug=slug)),
            bodiless=True,
        )


class RebuysView(GamesScope):
    @extend_schema(
        request=s.PlayerIn,
        responses={201: s.RebuyOut},
        parameters=[SLUG, IDEMPOTENCY],
        summary="A player still in buys again, in the early rounds",
        extensions=error_codes(
            {
                **ENTRY,
                409: [
                    G.REBUY_NOT_ALLOWED,
                    G.REBUY_CLOSED,
                    G.REBUY_LIMIT,
                    G.NOT_REGISTERED,
                    G.TOURNAMENT_STATE,
                    *ESCROW,
                ],
            }
        ),
    )
    def post(self, request, slug: str):
        def run():
            player = valid_data(s.PlayerIn, request)["player"]
            registration = entries.rebuy_create(client=request.auth, slug=slug, player=player)
            count = entries.players_count(registration.tournament)
            return {**s.registration_out(registration, count), "rebuys": registration.rebuys}

        return _write(request, run, status.HTTP_201_CREATED)


class RoundView(GamesScope):
    @extend_schema(
        request=s.RoundIn,
        responses={202: s.RoundAcceptedOut},
        parameters=[SLUG, NUMBER, IDEMPOTENCY],
        summary="A round's table standings; settled (the final: prizes paid) by a Celery task",
        extensions=error_codes(
            {
                **A_TOURNAMENT,
                409: [G.ROUND_EXISTS, G.ROUND_INVALID, G.TOURNAMENT_STATE],
                422: [G.ROUND_REJECTED, W.UNKNOWN_PLAYER],
            }
        ),
    )
    def post(self, request, slug: str, number: int):
        def run():
            tables = valid_data(s.RoundIn, request)["tables"]
            stored = rounds.round_store(
                client=request.auth, slug=slug, number=number, tables=tables
            )
            return {"tournament": slug, "round": stored.number, "status": stored.status}

        return _write(request, run, status.HTTP_202_ACCEPTED)
