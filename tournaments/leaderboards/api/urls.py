"""The leaderboard endpoint."""

from django.urls import path

from tournaments.leaderboards.api import views

urlpatterns = [
    path("leaderboards/<slug:slug>", views.LeaderboardView.as_view(), name="leaderboard"),
]
