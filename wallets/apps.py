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
        from rummy_ledger.api.codes import error_codes_register
        from wallets import checks, roles  # noqa: F401  (checks register by being imported)
        from wallets.errors import WalletErrorCode
        from wallets.models import (
            Adjustment,
            BonusGrant,
            GstRateProposal,
            Reversal,
            WindDown,
            WithdrawalReview,
        )
        from wallets.services import adjustments, bonuses, reversals, wind_down, withdrawals
        from wallets.services.proposals import proposal_kind_register
        from wallets.tax import gst_rates

        # Each proposal kind lives with its subject; the engine names none of them. The order
        # registered is the order finance sees the kinds in (the dashboard).
        proposal_kind_register(Adjustment, on_approve=adjustments.adjustment_post)
        proposal_kind_register(Reversal, on_approve=reversals.reversal_post)
        proposal_kind_register(BonusGrant, on_approve=bonuses.bonus_grant_post)
        proposal_kind_register(
            WithdrawalReview,
            on_approve=withdrawals.review_approved,
            on_reject=withdrawals.review_rejected,
        )
        proposal_kind_register(GstRateProposal, on_approve=gst_rates.gst_rate_add)
        proposal_kind_register(WindDown, on_approve=wind_down.wind_down_approved)

        error_codes_register(WalletErrorCode)  # the API's catalogue names no app
        from wallets import metrics

        metrics.register()  # withdrawals waiting, the last reconciliation (rummy_ledger.metrics)
        post_migrate.connect(roles.roles_after_migrate, dispatch_uid="wallets-finance-roles")
        post_migrate.connect(
            gst_rates.gst_history_after_migrate, dispatch_uid="wallets-gst-history"
        )
