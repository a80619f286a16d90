from django.urls import path

from wallets.api import views

urlpatterns = [
    path("players/<str:player_id>/wallet", views.WalletView.as_view(), name="wallet"),
    path("players/<str:player_id>/deposits", views.DepositView.as_view(), name="deposits"),
]
