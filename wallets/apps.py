from django.apps import AppConfig


class WalletsConfig(AppConfig):
    name = "wallets"
    verbose_name = "Ledger and wallets"
