from django.urls import path

from rummy_ledger.api import fields  # noqa: F401  (registers the `ext_id` path converter)
from tournaments.api import tournament_views as tv
from tournaments.api import views
from tournaments.api.deal_batch import DealBatchView
from tournaments.api.hands import HandEvaluateView

urlpatterns = [
    path("templates", views.TemplatesView.as_view(), name="templates"),
    path("hands/evaluate", HandEvaluateView.as_view(), name="hands-evaluate"),
    path("games", views.GameOpenView.as_view(), name="games"),
    path("games/<ext_id:game_id>", views.GameView.as_view(), name="game"),
    path("games/<ext_id:game_id>/deals", views.DealView.as_view(), name="game-deals"),
    path("games/<ext_id:game_id>/rejoin", views.RejoinView.as_view(), name="game-rejoin"),
    path("games/<ext_id:game_id>/split", views.SplitView.as_view(), name="game-split"),
    path("games/<ext_id:game_id>/cancel", views.CancelView.as_view(), name="game-cancel"),
    path("deals", DealBatchView.as_view(), name="deals"),
    path("tournaments", tv.TournamentsView.as_view(), name="tournaments"),
    path("tournaments/<slug:slug>", tv.TournamentView.as_view(), name="tournament"),
    path(
        "tournaments/<slug:slug>/registrations",
        tv.RegistrationsView.as_view(),
        name="tournament-registrations",
    ),
    path(
        "tournaments/<slug:slug>/registrations/<ext_id:player>",
        tv.RegistrationView.as_view(),
        name="tournament-registration",
    ),
    path("tournaments/<slug:slug>/start", tv.StartView.as_view(), name="tournament-start"),
    path("tournaments/<slug:slug>/cancel", tv.CancelView.as_view(), name="tournament-cancel"),
    path("tournaments/<slug:slug>/rebuys", tv.RebuysView.as_view(), name="tournament-rebuys"),
    path(
        "tournaments/<slug:slug>/rounds/<int:number>",
        tv.RoundView.as_view(),
        name="tournament-round",
    ),
]
