from django.urls import path

from tournaments.api import views

urlpatterns = [
    path("templates", views.TemplatesView.as_view(), name="templates"),
    path("games", views.GameOpenView.as_view(), name="games"),
    path("games/<str:game_id>", views.GameView.as_view(), name="game"),
    path("games/<str:game_id>/deals", views.DealView.as_view(), name="game-deals"),
    path("games/<str:game_id>/rejoin", views.RejoinView.as_view(), name="game-rejoin"),
    path("games/<str:game_id>/split", views.SplitView.as_view(), name="game-split"),
    path("games/<str:game_id>/cancel", views.CancelView.as_view(), name="game-cancel"),
]
