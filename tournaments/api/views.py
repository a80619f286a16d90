"""Game-server endpoints: one view per operation; views translate, services decide."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from rummy_ledger.db import snapshot
from tournaments.api import serializers as s
from tournaments.idempotency import idempotent
from tournaments.services import games, settlement
from wallets.api.auth import HasScope

IDEMPOTENCY = OpenApiParameter(
    "Idempotency-Key", OpenApiTypes.STR, OpenApiParameter.HEADER, required=True
)


class GamesScope(APIView):
    permission_classes = [HasScope]
    required_scopes = ("games",)


class TemplatesView(GamesScope):
    @extend_schema(responses=OpenApiTypes.OBJECT, summary="The active game templates")
    def get(self, request):
        return Response({"templates": [s.template_out(t) for t in games.templates_active()]})


class GameOpenView(GamesScope):
    @extend_schema(
        request=s.GameOpenIn,
        responses={201: OpenApiTypes.OBJECT},
        parameters=[IDEMPOTENCY],
        summary="Open a game: every player's entry into escrow, all or nothing",
    )
    def post(self, request):
        def run():
            data = _valid(s.GameOpenIn, request)
            game = games.game_open(
                client=request.auth,
                game_id=data["game_id"],
                template_slug=data["template"],
                players=data["players"],
            )
            return Response(s.game_out(game), status=status.HTTP_201_CREATED)

        return idempotent(request, run)


class GameView(GamesScope):
    @extend_schema(responses=OpenApiTypes.OBJECT, summary="Standings, deals, payouts and fee")
    def get(self, request, game_id: str):
        with snapshot():  # the game and its deals as of one moment
            state = s.game_out(games.game_get(client=request.auth, game_id=game_id))
        return Response(state)


class DealView(GamesScope):
    @extend_schema(
        request=s.DealIn,
        responses={202: OpenApiTypes.OBJECT},
        parameters=[IDEMPOTENCY],
        summary="Post a finished deal; checked now, settled by a Celery job",
    )
    def post(self, request, game_id: str):
        def run():
            data = _valid(s.DealIn, request)
            deal, _ = settlement.deal_store(client=request.auth, game_id=game_id, payload=data)
            body = {"game_id": game_id, "deal_no": deal.deal_no, "status": deal.status}
            return Response(body, status=status.HTTP_202_ACCEPTED)

        return idempotent(request, run)


class RejoinView(GamesScope):
    @extend_schema(request=s.RejoinIn, responses=OpenApiTypes.OBJECT, parameters=[IDEMPOTENCY])
    def post(self, request, game_id: str):
        def run():
            data = _valid(s.RejoinIn, request)
            game = games.game_rejoin(client=request.auth, game_id=game_id, player=data["player"])
            return Response(s.game_out(game))

        return idempotent(request, run)


class SplitView(GamesScope):
    @extend_schema(request=None, responses=OpenApiTypes.OBJECT, parameters=[IDEMPOTENCY])
    def post(self, request, game_id: str):
        return idempotent(
            request,
            lambda: Response(s.game_out(games.game_split(client=request.auth, game_id=game_id))),
        )


class CancelView(GamesScope):
    @extend_schema(request=None, responses=OpenApiTypes.OBJECT, parameters=[IDEMPOTENCY])
    def post(self, request, game_id: str):
        return idempotent(
            request,
            lambda: Response(s.game_out(games.game_cancel(client=request.auth, game_id=game_id))),
        )


def _valid(serializer_class, request) -> dict:
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
