"""Finance staff's admin for games, by area: `templates` (editable, but their money terms only
through an approved `TemplateChange`), `games` (read-only games with their settlement
breakdown, deals, proposing a game's reversal), `reports` (the fee report)."""

from tournaments.admin import games, reports, templates, tournament_pages

__all__ = ["games", "reports", "templates", "tournament_pages"]
