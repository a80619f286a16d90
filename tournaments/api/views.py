"""Game-server endpoints: one view per operation; views translate, services decide."""

import logging

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from rummy_ledger.api.auth import HasScope
from rummy_ledger.api.idempotency import IDEMPOTENCY_HEADER as IDEMPOTENCY
from rummy_ledger.api.idempotency import idempotent
from rummy_ledger.db import snapshot
from tournaments.api import serializers as s
from tournaments.errors import TermsInvalid
from tournaments.services import games, intake

log = logging.getLogger(__name__)


class GamesScope(APIView):
    permission_classes = [HasScope]
    required_scopes = ("games",)


class TemplatesView(GamesScope):
    @extend_schema(responses=s.TemplatesOut, summary="The active game templates")
    def get(self, request):
        return Response({"templates": _playable(games.templates_active())})


class GameOpenView(GamesScope):
    @extend_schema(
        request=s.GameOpenIn,
        responses={201: s.GameOut},
        parameters=[IDEMPOTENCY],
        summary="Open a game: every player's entry into escrow, all or nothing",
    )
    def post(self, request):
        def run():
            data = valid_data(s.GameOpenIn, request)
            game = games.game_open(
                client=request.auth,
                game_id=data["game_id"],
                template_slug=data["template"],
                players=data["players"],
            )
            return Response(s.game_out(game), status=status.HTTP_201_CREATED)

        return idempotent(request, run)


class GameView(GamesScope):
    @extend_schema(responses=s.GameOut, summary="Standings, deals, payouts and fee")
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
    )
    def post(self, request, game_id: str):
        def run():
            data = valid_data(s.DealIn, request)
            deal, _ = intake.deal_store(client=request.auth, game_id=game_id, payload=data)
            body = {"game_id": game_id, "deal_no": deal.deal_no, "status": deal.status}
            return Response(body, status=status.HTTP_202_ACCEPTED)

        return idempotent(request, run)


class RejoinView(GamesScope):
    @extend_schema(
        request=s.RejoinIn,
        responses=s.GameOut,
        parameters=[IDEMPOTENCY],
        summary="Pool: an eliminated player buys back in",
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
    )
    def post(self, request, game_id: str):
        return idempotent(
            request,
            lambda: Response(s.game_out(games.game_split(client=request.auth, game_id=game_id))),
        )


class CancelView(GamesScope):
    @extend_schema(
        request=None,
        responses=s.GameOut,
        parameters=[IDEMPOTENCY],
        summary="Abort: everything in escrow goes back",
    )
    def post(self, request, game_id: str):
        return idempotent(
            request,
            lambda: Response(s.game_out(games.game_cancel(client=request.auth, game_id=game_id))),
        )


def valid_data(serializer_class, request) -> dict:
    """The request body as the input serializer accepts it (a 400 in the envelope if not)."""
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


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
