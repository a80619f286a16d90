-- The deal intake (tournaments.games.services.intake) locks the games of the deals it is posted:
-- every game free now at once, in id order; then each game another transaction holds, waited for
-- under the request's lock bound in a block of its own (a subtransaction only where there was
-- contention). A game still held past that bound is reported, not raised, so that its deals
-- alone are answered 'busy' and the others go on. The intake then reads the locked games in a
-- statement of its own (a snapshot taken after the locks), checks the deals and inserts them:
-- the statement that re-confirmed a lockless read and claimed the Idempotency-Key is gone (the
-- API layer records the key, rummy_ledger.api.idempotency).
DROP FUNCTION IF EXISTS deal_intake_store(
    bigint, integer, integer, text, jsonb, text, bigint, text, text, integer, text, text);

CREATE OR REPLACE FUNCTION deal_games_lock(p_client bigint, p_game_ids text[])
RETURNS TABLE (game_id text, locked boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_free bigint[];
    v_game record;
BEGIN
    SELECT array_agg(f.id) INTO v_free FROM (
        SELECT g.id FROM tournaments_game g
         WHERE g.client_id = p_client AND g.game_id = ANY(p_game_ids)
         ORDER BY g.id FOR UPDATE SKIP LOCKED) f;
    FOR v_game IN SELECT g.id, g.game_id FROM tournaments_game g
                   WHERE g.client_id = p_client AND g.game_id = ANY(p_game_ids) ORDER BY g.id LOOP
        game_id := v_game.game_id;
        locked := true;
        IF NOT v_game.id = ANY(coalesce(v_free, '{}')) THEN
            BEGIN
                PERFORM 1 FROM tournaments_game g WHERE g.id = v_game.id FOR UPDATE;
            EXCEPTION WHEN lock_not_available OR deadlock_detected THEN
                locked := false;
            END;
        END IF;
        RETURN NEXT;
    END LOOP;
END;
$$;
