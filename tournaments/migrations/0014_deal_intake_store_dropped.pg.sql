-- A posted deal is stored by a plain INSERT under the game's row lock, taken by the intake's read
-- (tournaments.games.services.intake): the statement that re-confirmed a lockless read and claimed
-- the Idempotency-Key is gone (the API layer claims the key, rummy_ledger.api.idempotency).
DROP FUNCTION IF EXISTS deal_intake_store(
    bigint, integer, integer, text, jsonb, text, bigint, text, text, integer, text, text);
