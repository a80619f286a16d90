"""Finance staff's admin for games, by area: `templates` (editable, but their money terms only
through an approved `TemplateChange`), `games` (read-only games with their settlement
breakdown, deals, proposing a game's reversal), `reports` (the fee report), `tournament_pages`
(tournaments, read-only, and the P&L of `tournament_pnl`), `tournament_proposals` (a new
tournament and new money terms, maker-checker)."""

from tournaments.admin import games, reports, templates, tournament_pages, tournament_proposals

__all__ = ["games", "reports", "templates", "tournament_pages", "tournament_proposals"]
