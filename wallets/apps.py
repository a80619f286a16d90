from django.apps import AppConfig
from django.db.models.signals import post_migrate


class WalletsConfig(AppConfig):
    name = "wallets"
    verbose_name = "Ledger and wallets"
    # What finance roles may do here beyond viewing (wallets.roles). API clients are managed by
    # superusers only: a key with the `payments` scope moves money with no approver.
    finance_permissions = {
        "finance operator": [
            "add_adjustment",
            "add_reversal",
            "run_reconciliation",
            "add_gatewaystatement",
            "add_withdrawalreview",
            "add_bonusgrant",
            "set_player_region",
            "add_gstrateproposal",
            "add_winddown",
        ],
        "finance approver": [
            "approve_adjustment",
            "approve_reversal",
            "approve_withdrawal",
            "approve_bonusgrant",
            "approve_gstrateproposal",
            "approve_winddown",
        ],
    }

    def ready(self) -> None:
        from wallets import checks, roles  # noqa: F401  (checks register by being imported)
        from wallets.services import gst_rates, wind_down  # noqa: F401 (wind_down: its kind)

        post_migrate.connect(roles.roles_after_migrate, dispatch_uid="wallets-finance-roles")
        post_migrate.connect(
            gst_rates.gst_history_after_migrate, dispatch_uid="wallets-gst-history"
        )
