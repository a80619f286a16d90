"""The leaderboard endpoint: the client's own leaderboard and its standings, cursor-paged."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from rummy_ledger.api.paging import AFTER_PARAMETER, LIMIT_PARAMETER, page_answer, page_asked
from rummy_ledger.api.schema import error_codes
from rummy_ledger.db import snapshot
from tournaments.errors import GameErrorCode as G
from tournaments.games.api.views import GamesScope
from tournaments.leaderboards import selectors
from tournaments.leaderboards.api import serializers as s

SLUG = OpenApiParameter(
    "slug", str, OpenApiParameter.PATH, description="The leaderboard's slug (as created)."
)


class LeaderboardView(GamesScope):
    @extend_schema(
        responses=s.LeaderboardOut,
        parameters=[SLUG, AFTER_PARAMETER, LIMIT_PARAMETER],
        summary="A leaderboard: its period, status and standings (rank, player, points), "
        "cursor-paged",
        extensions=error_codes({404: [G.LEADERBOARD_NOT_FOUND]}),
    )
    def get(self, request, slug: str):
        asked = page_asked(s.LeaderboardQuery, request)
        with snapshot():
            board = selectors.leaderboard_get(client=request.auth, slug=slug)
            rows = selectors.standings_page(
                leaderboard=board, after=asked.after_id, count=asked.count
            )
        page = page_answer("standings", rows, asked, s.standing_out)
        return Response(s.leaderboard_out(board, page))
