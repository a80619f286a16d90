from django.apps import AppConfig


class TournamentsConfig(AppConfig):
    name = "tournaments"
    verbose_name = "Games and settlement"
    # What finance roles may do here beyond viewing (wallets.roles). Operators edit templates'
    # other fields and propose money terms; an approver applies them; only superusers add a
    # template (its money terms are a new table's, with no approval). Operators propose a new
    # tournament or leaderboard; an approver creates it by approving.
    finance_permissions = {
        "finance operator": [
            "change_gametemplate",
            "add_templatechange",
            "add_tournamentchange",
            "add_newtournament",
            "add_ticketissue",
            "add_newleaderboard",
        ],
        "finance approver": [
            "approve_templatechange",
            "approve_tournamentchange",
            "approve_newtournament",
            "approve_ticketissue",
            "approve_newleaderboard",
        ],
    }

    def ready(self) -> None:
        from rummy_ledger.plugins import register
        from tournaments.plugins import plug_ins

        register(**plug_ins())
