"""The lobby's endpoints: tournaments, registrations, rebuys, start, cancel and rounds."""

from django.urls import path

from rummy_ledger.api import fields  # noqa: F401  (registers the `ext_id` path converter)
from tournaments.tournaments.api import views

urlpatterns = [
    path("tournaments", views.TournamentsView.as_view(), name="tournaments"),
    path("tournaments/<slug:slug>", views.TournamentView.as_view(), name="tournament"),
    path(
        "tournaments/<slug:slug>/registrations",
        views.RegistrationsView.as_view(),
        name="tournament-registrations",
    ),
    path(
        "tournaments/<slug:slug>/registrations/<ext_id:player>",
        views.RegistrationView.as_view(),
        name="tournament-registration",
    ),
    path(
        "players/<ext_id:player_id>/tickets",
        views.PlayerTicketsView.as_view(),
        name="player-tickets",
    ),
    path("tournaments/<slug:slug>/start", views.StartView.as_view(), name="tournament-start"),
    path("tournaments/<slug:slug>/cancel", views.CancelView.as_view(), name="tournament-cancel"),
    path("tournaments/<slug:slug>/rebuys", views.RebuysView.as_view(), name="tournament-rebuys"),
    path(
        "tournaments/<slug:slug>/rounds/<int:number>",
        views.RoundView.as_view(),
        name="tournament-round",
    ),
]
