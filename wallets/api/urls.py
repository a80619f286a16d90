from django.urls import path

from rummy_ledger.api import fields  # noqa: F401  (registers the `ext_id` path converter)
from wallets.api import views

urlpatterns = [
    path("players/<ext_id:player_id>/wallet", views.WalletView.as_view(), name="wallet"),
    path("players/<ext_id:player_id>/deposits", views.DepositView.as_view(), name="deposits"),
    path("players/<ext_id:player_id>/kyc", views.KycView.as_view(), name="kyc"),
    path(
        "players/<ext_id:player_id>/withdrawals",
        views.WithdrawalView.as_view(),
        name="withdrawals",
    ),
    path(
        "players/<ext_id:player_id>/tax/<str:fy>",
        views.TaxStatementView.as_view(),
        name="tax-statement",
    ),
    path("players/<ext_id:player_id>/limits", views.LimitsView.as_view(), name="limits"),
    path(
        "players/<ext_id:player_id>/self-exclusion",
        views.SelfExclusionView.as_view(),
        name="self-exclusion",
    ),
    path("deposits", views.DepositsView.as_view(), name="deposits-list"),
    path("withdrawals", views.WithdrawalsView.as_view(), name="withdrawals-list"),
    path(
        "withdrawals/<int:withdrawal_id>",
        views.WithdrawalGetView.as_view(),
        name="withdrawal",
    ),
    path(
        "withdrawals/<int:withdrawal_id>/paid",
        views.WithdrawalPaidView.as_view(),
        name="withdrawal-paid",
    ),
    path(
        "withdrawals/<int:withdrawal_id>/failed",
        views.WithdrawalFailedView.as_view(),
        name="withdrawal-failed",
    ),
]
