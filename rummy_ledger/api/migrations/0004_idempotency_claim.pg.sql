-- Claim an Idempotency-Key and record its answer in one statement (rummy_ledger.keyed): the
-- write it guards runs in the same transaction (tournaments' deal_intake_store calls it), or
-- the answer is a refusal and nothing else is written. A repeat of a request still running
-- waits p_claim_wait at most on the unique (client, key), then gets in_flight (no error, so the
-- caller's transaction goes on); the request's own lock bound is put back after the claim.
-- outcome: 'claimed', 'taken' (the record: its request hash, status and body) or 'in_flight'.
-- p_strict: anything but 'claimed' is an error instead (SQLSTATE RL101, the outcome as its
-- message), so that a multi-statement write sent with the claim rolls back whole.
CREATE OR REPLACE FUNCTION idempotency_claim(
    p_client bigint, p_key text, p_request_hash text, p_status_code integer, p_body text,
    p_claim_wait text, p_strict boolean DEFAULT false
) RETURNS TABLE (outcome text, request_hash text, status_code integer, body text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_bound text := current_setting('lock_timeout');
    v_rows integer;
BEGIN
    PERFORM set_config('lock_timeout', p_claim_wait, true);
    BEGIN
        INSERT INTO api_idempotencyrecord (client_id, key, request_hash, status_code, body,
                                           created_at)
        VALUES (p_client, p_key, p_request_hash, p_status_code, p_body, now())
        ON CONFLICT (client_id, key) DO NOTHING;
        GET DIAGNOSTICS v_rows = ROW_COUNT;
    EXCEPTION WHEN lock_not_available THEN
        PERFORM set_config('lock_timeout', v_bound, true);
        IF p_strict THEN
            RAISE EXCEPTION USING ERRCODE = 'RL101', MESSAGE = 'in_flight';
        END IF;
        RETURN QUERY SELECT 'in_flight'::text, NULL::text, NULL::integer, NULL::text;
        RETURN;
    END;
    PERFORM set_config('lock_timeout', v_bound, true);
    IF v_rows = 1 THEN
        RETURN QUERY SELECT 'claimed'::text, NULL::text, NULL::integer, NULL::text;
        RETURN;
    END IF;
    IF p_strict THEN
        RAISE EXCEPTION USING ERRCODE = 'RL101', MESSAGE = 'taken';
    END IF;
    RETURN QUERY
        SELECT 'taken'::text, r.request_hash::text, r.status_code::integer, r.body
          FROM api_idempotencyrecord r WHERE r.client_id = p_client AND r.key = p_key;
    IF NOT FOUND THEN  -- the holder rolled back after all: the client retries
        RETURN QUERY SELECT 'in_flight'::text, NULL::text, NULL::integer, NULL::text;
    END IF;
END;
$$;
