"""Cash and practice games: templates (finance-edited), games with their escrow, seats and deals,
and what a deal pays. `formats/` and `terms` are pure (no Django); `models` holds the games'
tables, `services/` what changes them, `api/` the game server's endpoints and `admin/` finance's
pages (templates, games, the fee report)."""
