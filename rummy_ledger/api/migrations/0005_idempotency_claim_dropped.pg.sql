-- The API layer records an Idempotency-Key with its answer itself, at the end of the write's
-- transaction (rummy_ledger/api/idempotency.py): no write claims it in SQL any more.
DROP FUNCTION IF EXISTS idempotency_claim(bigint, text, text, integer, text, text, boolean);
