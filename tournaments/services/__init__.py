"""Game services: opening, deals, settlement, rejoin, split, cancel (small modules, one job each).

- `terms`: a template's terms copied onto a game, its rules resolved;
- `escrow`: moving money between wallets and a game's escrow (entries in, payouts and refunds out);
- `games`: open, rejoin, split, cancel;
- `deal_validation`: the synchronous checks of a posted deal, and scoring it with the engine;
- `settlement`: storing a deal and settling it (the Celery task's body).
"""
