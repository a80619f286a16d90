"""Finance staff's admin for games, by area: `templates` (editable, but their money terms only
through an approved `TemplateChange`), `games` (read-only games with their settlement
breakdown, deals, proposing a game's reversal), `reports` (the fee report, drawn by `charts`)."""

from tournaments.games.admin import games, reports, templates

__all__ = ["games", "reports", "templates"]
