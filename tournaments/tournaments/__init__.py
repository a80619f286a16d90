"""Tournaments: scheduled, registered into escrow, played in rounds of table standings, paid at
the final. `terms` is pure (no Django); `models` holds the tournaments' tables, `services/` what
changes them, `api/` the lobby's endpoints and `admin/` finance's pages (tournaments, their P&L,
new tournaments and new money terms through maker-checker)."""
