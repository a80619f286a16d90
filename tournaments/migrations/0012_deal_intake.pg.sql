-- A posted deal stored in one statement (tournaments.services.intake): the game locked, the
-- state its checks read re-confirmed, the Idempotency-Key claimed with its answer, the deal
-- inserted. The checks ran on a read of that state (the first round trip); when the game moved
-- meanwhile (another deal, a settlement, a cancel) nothing is written and the outcome is
-- 'stale': the caller takes the full path (one transaction that settles pending deals first).
-- outcome: 'stored' (deal_id), 'stale', or the key's: 'taken' (its record), 'in_flight'.
CREATE OR REPLACE FUNCTION deal_intake_store(
    p_game bigint, p_deals_played integer, p_deal_no integer, p_wild_joker text,
    p_results jsonb, p_payload_hash text,
    p_client bigint, p_key text, p_request_hash text, p_status_code integer, p_body text,
    p_claim_wait text
) RETURNS TABLE (outcome text, deal_id bigint, request_hash text, status_code integer, body text)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
    v_status text;
    v_played integer;
    v_claim record;
    v_deal bigint;
BEGIN
    SELECT g.status, g.deals_played INTO v_status, v_played
      FROM tournaments_game g WHERE g.id = p_game FOR UPDATE;
    IF v_status IS DISTINCT FROM 'open' OR v_played <> p_deals_played
       OR EXISTS (SELECT 1 FROM tournaments_deal d
                   WHERE d.game_id = p_game AND (d.status = 'stored' OR d.deal_no = p_deal_no)) THEN
        RETURN QUERY SELECT 'stale'::text, NULL::bigint, NULL::text, NULL::integer, NULL::text;
        RETURN;
    END IF;
    IF p_key IS NOT NULL THEN
        SELECT * INTO v_claim
          FROM idempotency_claim(p_client, p_key, p_request_hash, p_status_code, p_body,
                                 p_claim_wait);
        IF v_claim.outcome <> 'claimed' THEN
            RETURN QUERY SELECT v_claim.outcome, NULL::bigint, v_claim.request_hash,
                                v_claim.status_code, v_claim.body;
            RETURN;
        END IF;
    END IF;
    INSERT INTO tournaments_deal (game_id, deal_no, wild_joker, results, payload_hash, points,
                                  discrepancies, status, created_at)
    VALUES (p_game, p_deal_no, p_wild_joker, p_results, p_payload_hash, '{}'::jsonb,
            '{}'::jsonb, 'stored', now())
    RETURNING id INTO v_deal;
    RETURN QUERY SELECT 'stored'::text, v_deal, NULL::text, NULL::integer, NULL::text;
END;
$$;
