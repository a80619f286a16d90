"""Finance staff's admin for tournaments: `pages` (tournaments, read-only, and the P&L of
`pnl`), `proposals` (a new tournament and new money terms, maker-checker) with their `forms`."""

from tournaments.tournaments.admin import pages, proposals

__all__ = ["pages", "proposals"]
