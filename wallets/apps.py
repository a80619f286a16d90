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
            "add_monthclose",
            "add_pairclearance",
        ],
        "finance approver": [
            "approve_adjustment",
            "approve_reversal",
            "approve_withdrawal",
            "approve_bonusgrant",
            "approve_gstrateproposal",
            "approve_winddown",
            "approve_monthclose",
            "approve_pairclearance",
        ],
    }

    def ready(self) -> None:
        from rummy_ledger.plugins import offer, register
        from wallets import checks, metrics, roles  # noqa: F401  (checks register by being imported)
        from wallets.admin import dashboard, reports, search
        from wallets.api import serializers
        from wallets.chain.witnesses import witness_provider_register
        from wallets.errors import WalletErrorCode
        from wallets.reconciliation import runner
        from wallets.services import flows, wind_down
        from wallets.services.proposals import proposal_kind_register
        from wallets.tax import gst_rates

        # What the other apps plug into the ledger, which never imports them (the kinds:
        # rummy_ledger/plugins.py).
        offer("proposal_kinds", proposal_kind_register)
        offer("decision_receivers", _decision_receiver_connect)
        offer("reconciliation_checks", runner.register)
        offer("reference_finders", search.reference_finder_register)
        offer("reference_namers", search.reference_namer_register)
        offer("reports", reports.report_register)
        offer("dashboard_widgets", lambda placed: dashboard.register(*placed))
        offer("wind_down_steps", wind_down.wind_down_step_register)
        offer("flow_finders", flows.flow_finder_register)
        offer("chain_witnesses", witness_provider_register)

        register(
            error_codes=[WalletErrorCode],  # the API's catalogue names no app
            event_renderers=serializers.EVENT_RENDERERS,  # the money's events (rummy_ledger.events)
            # withdrawals waiting, the last reconciliation (rummy_ledger.metrics)
            readings=metrics.READINGS,
            proposal_kinds=_proposal_kinds(),
        )
        post_migrate.connect(roles.roles_after_migrate, dispatch_uid="wallets-finance-roles")
        post_migrate.connect(
            gst_rates.gst_history_after_migrate, dispatch_uid="wallets-gst-history"
        )


def _proposal_kinds() -> list:
    """The ledger's proposal kinds. Each lives with its subject; the engine names none of them.
    The order registered is the order finance sees the kinds in (the dashboard)."""
    from wallets.models import (
        Adjustment,
        BonusGrant,
        GstRateProposal,
        MonthClose,
        PairClearance,
        Reversal,
        WindDown,
        WithdrawalReview,
    )
    from wallets.services import adjustments, bonuses, reversals, wind_down, withdrawals
    from wallets.services.months import month_close_take
    from wallets.services.pair_clearances import pair_clearance_approved
    from wallets.services.proposals import ProposalKind
    from wallets.tax import gst_rates

    return [
        ProposalKind(Adjustment, on_approve=adjustments.adjustment_post),
        ProposalKind(Reversal, on_approve=reversals.reversal_post),
        ProposalKind(BonusGrant, on_approve=bonuses.bonus_grant_post),
        ProposalKind(
            WithdrawalReview,
            on_approve=withdrawals.review_approved,
            on_reject=withdrawals.review_rejected,
        ),
        ProposalKind(GstRateProposal, on_approve=gst_rates.gst_rate_add),
        ProposalKind(WindDown, on_approve=wind_down.wind_down_approved),
        ProposalKind(MonthClose, on_approve=month_close_take),
        ProposalKind(PairClearance, on_approve=pair_clearance_approved),
    ]


def _decision_receiver_connect(receiver) -> None:
    """`receiver(sender, *, proposal, approved, **kwargs)`, connected once to
    `wallets.signals.proposal_decided`."""
    from wallets.signals import proposal_decided

    proposal_decided.connect(
        receiver, dispatch_uid=f"{receiver.__module__}.{receiver.__qualname__}"
    )
