"""The ledger and the wallets: accounts, transfers and entries (double entry, enforced by
PostgreSQL: `models/sql.py`), players and their buckets, money in and out and its taxes (`tax/`),
finance staff's proposals (adjustments, reversals), reconciliation, and their admin.

Owns: every movement of money (`services.transfers.transfers_post` is the only way), the account
codes and references (`references`), the finance roles (`roles`), the reconciliation runner.
May not touch: `tournaments` (never imported: games register with this app, not the other way
round, through `rummy_ledger/plugins.py`: their reconciliation checks, proposal kinds
(`services.proposals`), what their ids name in a search (`admin.search`), their reports
(`admin.reports`), who follows a decision (`signals`); their finance permissions are their
AppConfig's), the API layer (but for the model of its callers, `ApiClient`: a deposit or a
withdrawal is a client's, and its guards are per client).
"""
