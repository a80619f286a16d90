from django.urls import path

from rummy_ledger.api import fields  # noqa: F401  (registers the `ext_id` path converter)
from tournaments.games.api import views
from tournaments.games.api.deal_batch import DealBatchView
from tournaments.games.api.hands import HandEvaluateView

urlpatterns = [
    path("templates", views.TemplatesView.as_view(), name="templates"),
    path("hands/evaluate", HandEvaluateView.as_view(), name="hands-evaluate"),
    path("games", views.GamesView.as_view(), name="games"),
    path("games/<ext_id:game_id>", views.GameView.as_view(), name="game"),
    path("games/<ext_id:game_id>/deals", views.DealView.as_view(), name="game-deals"),
    path("games/<ext_id:game_id>/rejoin", views.RejoinView.as_view(), name="game-rejoin"),
    path("games/<ext_id:game_id>/split", views.SplitView.as_view(), name="game-split"),
    path("games/<ext_id:game_id>/cancel", views.CancelView.as_view(), name="game-cancel"),
    path("deals", DealBatchView.as_view(), name="deals"),
]
