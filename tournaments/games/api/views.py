"""Game-server endpoints: one view per operation; views translate, services decide."""

import logging

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from rummy_ledger.api.fields import StrictSerializer
from rummy_ledger.api.idempotency import IDEMPOTENCY_HEADER as IDEMPOTENCY
from rummy_ledger.api.idempotency import idempotent
from rummy_ledger.api.paging import (
    AFTER_PARAMETER,
    LIMIT_PARAMETER,
    page_answer,
    page_asked,
    query_parameter,
)
from rummy_ledger.api.schema import error_codes
from rummy_ledger.api.views import ScopedView, valid_data
from rummy_ledger.db import snapshot
from tournaments.errors import GameErrorCode as G
from tournaments.errors import TermsInvalid
from tournaments.games import selectors
from tournaments.games.api import serializers as s
from tournaments.games.api.deal_input import deal_read
from tournaments.games.services import games, intake, opening
from tournaments.models import Game
from wallets.errors import WalletErrorCode as W

log = logging.getLogger(__name__)

# The refusals each operation's services can answer, beyond what any request can (see
# rummy_ledger.api.schema). Money moving into or out of escrow: the players' locks and funds.
ESCROW = [
    W.INSUFFICIENT_FUNDS,
    W.REAL_MONEY_UNAVAILABLE,
    W.SELF_EXCLUDED,
    W.LEDGER_BUSY,
    W.CLIENT_CAP,  # the client's escrow cap in a rolling hour (wallets.services.client_guards)
]
NOT_PAIRED = [W.PLAYER_NOT_PAIRED]  # a player of a payments client not paired with this one
A_GAME = {404: [G.GAME_NOT_FOUND], 422: [W.BALANCE_OUT_OF_RANGE]}
# What a posted deal can be refused for (the single post, and each deal of a batch).
DEAL_REFUSALS = {
    400: [G.INVALID_DEAL, G.INVALID_CARD, G.GROUPS_REQUIRED],
    404: [G.GAME_NOT_FOUND],
    409: [G.DEAL_EXISTS, G.DEAL_OUT_OF_ORDER, G.GAME_NOT_OPEN],
    422: [
        G.DEAL_REJECTED,
        G.DECLARATION_MISSING,
        G.INVALID_DECLARATION,
        G.INVALID_SECOND_DECLARATION,
        G.WRONG_SHOW_VALID,
        G.WINNER_COUNT,
        G.HAND_SIZE,
        G.DROP_NOT_ALLOWED,
        G.TOO_MANY_COPIES,
        G.INVALID_MELD,
        G.JOKER_NOT_NAMED,
        G.JOKER_FIXED,
        G.MISSING_PLAYER,
        G.PLAYER_ELIMINATED,
        W.UNKNOWN_PLAYER,
    ],
}


class GamesScope(ScopedView):  # the game servers' endpoints
    required_scopes = ("games",)


class TemplatesView(GamesScope):
    @extend_schema(responses=s.TemplatesOut, summary="The active game templates")
    def get(self, request):
        return Response({"templates": _playable(games.templates_active())})


class GamesView(GamesScope):
    @extend_schema(
        responses=s.GamesOut,
        parameters=[
            query_parameter(
                "status",
                {"type": "string", "enum": list(Game.Status.values)},
                "Only the games in this state (all when absent).",
            ),
            AFTER_PARAMETER,
            LIMIT_PARAMETER,
        ],
        summary="This client's games, oldest first, cursor-paged: what a restarted game server "
        "reads back",
        operation_id="v1_games_list",  # the detail's GET would take the same name
    )
    def get(self, request):
        asked = page_asked(s.GamesQuery, request)
        rows = selectors.games_listed(
            client=request.auth,
            status=asked.filters.get("status"),
            after_id=asked.after_id,
            count=asked.count,
        )
        return Response(page_answer("games", rows, asked, s.game_item_out))

    @extend_schema(
        request=s.GameOpenIn,
        responses={201: s.GameOut},
        parameters=[IDEMPOTENCY],
        summary="Open a game: every player's entry into escrow, all or nothing",
        extensions=error_codes(
            {
                400: [G.TEMPLATE_INVALID],
                403: NOT_PAIRED,
                409: [G.GAME_EXISTS, *ESCROW],
                422: [
                    G.INVALID_PLAYERS,
                    G.UNKNOWN_TEMPLATE,
                    W.UNKNOWN_PLAYER,
                    W.BALANCE_OUT_OF_RANGE,
                ],
            }
        ),
    )
    def post(self, request):
        def run():
            data = valid_data(s.GameOpenIn, request)
            game, seats = opening.game_open(
                client=request.auth,
                game_id=data["game_id"],
                template_slug=data["template"],
                players=data["players"],
            )
            return Response(s.game_out(game, seats), status=status.HTTP_201_CREATED)

        return idempotent(request, run)


class GameView(GamesScope):
    @extend_schema(
        responses=s.GameOut,
        summary="Standings, deals, payouts and fee",
        extensions=error_codes({404: [G.GAME_NOT_FOUND]}),
    )
    def get(self, request, game_id: str):
        with snapshot():  # the game and its deals as of one moment
            state = s.game_out(games.game_get(client=request.auth, game_id=game_id))
        return Response(state)


class DealView(GamesScope):
    @extend_schema(
        request=s.DealIn,
        responses={202: s.DealAcceptedOut},
        parameters=[IDEMPOTENCY],
        summary="Post a finished deal; checked now, settled by a Celery job",
        extensions=error_codes(DEAL_REFUSALS),
    )
    def post(self, request, game_id: str):
        def run():
            payload = deal_read(request.data)
            deal, _ = intake.deal_store(client=request.auth, game_id=game_id, payload=payload)
            body = {"game_id": game_id, "deal_no": deal.deal_no, "status": deal.status}
            return Response(body, status=status.HTTP_202_ACCEPTED)

        return idempotent(request, run)


class RejoinView(GamesScope):
    @extend_schema(
        request=s.RejoinIn,
        responses=s.GameOut,
        parameters=[IDEMPOTENCY],
        summary="Pool: an eliminated player buys back in",
        extensions=error_codes(
            {
                **A_GAME,
                403: NOT_PAIRED,
                409: [
                    G.GAME_NOT_OPEN,
                    G.REJOIN_NOT_ALLOWED,
                    G.NOT_ELIMINATED,
                    G.REJOIN_CLOSED,
                    *ESCROW,
                ],
                422: [W.UNKNOWN_PLAYER, W.BALANCE_OUT_OF_RANGE],
            }
        ),
    )
    def post(self, request, game_id: str):
        def run():
            data = valid_data(s.RejoinIn, request)
            game = games.game_rejoin(client=request.auth, game_id=game_id, player=data["player"])
            return Response(s.game_out(game))

        return idempotent(request, run)


class SplitView(GamesScope):
    @extend_schema(
        request=None,
        responses=s.GameOut,
        parameters=[IDEMPOTENCY],
        summary="Pool: the remaining players agree to share the prize",
        extensions=error_codes(
            {**A_GAME, 409: [G.GAME_NOT_OPEN, G.SPLIT_NOT_ALLOWED, W.LEDGER_BUSY]}
        ),
    )
    def post(self, request, game_id: str):
        def run():
            valid_data(StrictSerializer, request)  # no body, or an empty one
            return Response(s.game_out(games.game_split(client=request.auth, game_id=game_id)))

        return idempotent(request, run)


class CancelView(GamesScope):
    @extend_schema(
        request=None,
        responses=s.GameOut,
        parameters=[IDEMPOTENCY],
        summary="Abort: everything in escrow goes back",
        extensions=error_codes({**A_GAME, 409: [G.GAME_NOT_OPEN, W.LEDGER_BUSY]}),
    )
    def post(self, request, game_id: str):
        def run():
            valid_data(StrictSerializer, request)  # no body, or an empty one
            return Response(s.game_out(games.game_cancel(client=request.auth, game_id=game_id)))

        return idempotent(request, run)


def _playable(templates) -> list[dict]:
    """Every template a game could be opened with; one whose terms are broken is left out (and
    logged for finance) rather than breaking the list for the others."""
    out = []
    for template in templates:
        try:
            out.append(s.template_out(template))
        except TermsInvalid as exc:
            log.error("template %s is not playable and is not listed: %s", template.slug, exc)
    return out
