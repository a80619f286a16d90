"""The hash chain through the ledger: every transfer, in commit order, gets a link whose hash
covers its content (entries, accounts, amounts, kind, reference, time; for a settlement, the
deal that caused it) and the previous link's hash, so a row changed behind the ledger's back
(a superuser skipping the append-only triggers, a backup edited and restored) shows.

canonical.py (pure): the serialisation hashed and the hash; witnesses.py: what other apps add
to a transfer's content (the games: the deal), registered; contents.py: a transfer's content as
stored now; links.py: the job that extends the chain and records each day's digest;
verify.py: the chain recomputed and compared.
"""
