"""Game services, one job each:

- `games`: open, rejoin, split, cancel (and reading a client's game);
- `intake`: checking and storing a posted deal (its settlement is queued after the commit);
- `settlement`: settling stored deals, the Celery task's body;
- `escrow`: money between wallets and a game's escrow (entries in, payouts and refunds out).

What a format allows and pays is `tournaments.games.formats`' to say; these modules never branch
on it.
"""
