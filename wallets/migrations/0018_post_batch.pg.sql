-- ledger_post_batch: posts many transfers in one call (the only way money moves).
-- Idempotent by key (the same key and content returns the first transfer; other content raises
-- RL001), locks the cached accounts it touches in id order (no deadlock between postings),
-- refuses overdrafts naming the accounts (RL004; the CHECK on wallets_account is the backstop),
-- bounded lock wait (`lock_timeout`), and refuses any new entry larger than `p_max_amount` (the
-- per-transfer maximum, `LEDGER_MAX_TRANSFER`; NULL means no maximum). Errors: RL001 idempotency
-- conflict, RL002 unknown account, RL003 currency mismatch, RL004 insufficient funds, RL007 an
-- entry above the maximum (RL005 and RL006 are guards.sql's).
-- As 0018 installed it: the same contract as 0007's in fewer statements. When every key is new
-- (the usual case) the transfers' ids come from the INSERT itself and the entries are the
-- arguments as given, so the look-up of the keys and the filtering of the entries are skipped;
-- the amount, account and currency checks are one statement. A single transfer runs 7 statements
-- instead of 10. Frozen: a later version goes into a file of its own beside the migration that
-- installs it (wallets/models/sql.py).
CREATE OR REPLACE FUNCTION ledger_post_batch(
    p_keys text[], p_kinds text[], p_refs text[], p_hashes text[], p_reverses bigint[],
    p_memos text[], e_transfer int[], e_account bigint[], e_amount numeric[], e_currency text[],
    p_lock_timeout text, p_max_amount numeric
) RETURNS TABLE (transfer_id bigint, created boolean)
LANGUAGE plpgsql AS $$
DECLARE
    new_ids bigint[];
    new_keys text[];
    ids bigint[];
    all_new boolean;
    mismatch text;
    bad_account bigint;
    bad_amount numeric;
    short text[];
    na bigint[];
    nm numeric[];
    nc text[];
    updated int;
    expected int;
BEGIN
    PERFORM set_config('lock_timeout', p_lock_timeout, true);

    WITH ins AS (
        INSERT INTO wallets_transfer
            (kind, reference, idempotency_key, content_hash, reverses_id, memo, created_at)
        SELECT k, r, key, h, rev, coalesce(m, ''), now()
        FROM unnest(p_kinds, p_refs, p_keys, p_hashes, p_reverses, p_memos) AS u(k, r, key, h, rev, m)
        ORDER BY key
        ON CONFLICT (idempotency_key) DO NOTHING
        RETURNING id, idempotency_key
    )
    SELECT coalesce(array_agg(id), '{}'), coalesce(array_agg(idempotency_key), '{}')
      INTO new_ids, new_keys FROM ins;
    all_new := cardinality(new_ids) = cardinality(p_keys);

    IF all_new AND cardinality(p_keys) = 1 THEN
        ids := new_ids;
    ELSIF all_new THEN
        -- the new ids in request order (no table read)
        SELECT array_agg(n.id ORDER BY u.ord) INTO ids
          FROM unnest(p_keys) WITH ORDINALITY AS u(key, ord)
          JOIN unnest(new_ids, new_keys) AS n(id, key) ON n.key = u.key;
    ELSE
        -- A new statement sees keys that concurrent transactions committed while we waited.
        SELECT array_agg(t.id ORDER BY u.ord),
               min(u.key) FILTER (WHERE t.content_hash <> p_hashes[u.ord])
          INTO ids, mismatch
          FROM unnest(p_keys) WITH ORDINALITY AS u(key, ord)
          JOIN wallets_transfer t ON t.idempotency_key = u.key;
        IF mismatch IS NOT NULL THEN
            RAISE EXCEPTION 'idempotency key % was already used for a different transfer',
                mismatch USING ERRCODE = 'RL001', DETAIL = mismatch;
        END IF;
    END IF;

    IF all_new THEN
        na := e_account;
        nm := e_amount;
        nc := e_currency;
    ELSE
        SELECT array_agg(a), array_agg(m), array_agg(c)
          INTO na, nm, nc
          FROM unnest(e_transfer, e_account, e_amount, e_currency) AS u(t, a, m, c)
         WHERE ids[t] = ANY(new_ids);
    END IF;

    IF na IS NOT NULL THEN
        SELECT max(abs(u.m)) FILTER (WHERE abs(u.m) > p_max_amount),
               min(u.a) FILTER (WHERE acc.id IS NULL),
               min(acc.code) FILTER (WHERE acc.balance_currency <> u.c)
          INTO bad_amount, bad_account, mismatch
          FROM unnest(na, nm, nc) AS u(a, m, c) LEFT JOIN wallets_account acc ON acc.id = u.a;
        IF bad_amount IS NOT NULL THEN
            RAISE EXCEPTION 'an entry of % is above the per-transfer maximum of %', bad_amount,
                p_max_amount USING ERRCODE = 'RL007', DETAIL = bad_amount::text;
        END IF;
        IF bad_account IS NOT NULL THEN
            RAISE EXCEPTION 'unknown account %', bad_account USING ERRCODE = 'RL002',
                DETAIL = bad_account::text;
        END IF;
        IF mismatch IS NOT NULL THEN
            RAISE EXCEPTION 'account % holds another currency', mismatch USING ERRCODE = 'RL003',
                DETAIL = mismatch;
        END IF;

        -- Lock the cached accounts in one fixed order; platform sinks are append-only.
        PERFORM 1 FROM wallets_account acc
          WHERE acc.id = ANY(na) AND acc.kind <> 'platform'
          ORDER BY acc.id FOR UPDATE;
        GET DIAGNOSTICS expected = ROW_COUNT;

        UPDATE wallets_account acc SET balance = acc.balance + delta.d
          FROM (SELECT a, sum(m) AS d FROM unnest(na, nm) AS u(a, m) GROUP BY a) AS delta
         WHERE acc.id = delta.a AND acc.kind <> 'platform' AND acc.balance + delta.d >= 0;
        GET DIAGNOSTICS updated = ROW_COUNT;
        IF updated <> expected THEN
            -- Some account would go below zero: name them all (rows are still locked).
            SELECT array_agg(acc.code ORDER BY acc.code) INTO short
              FROM (SELECT a, sum(m) AS d FROM unnest(na, nm) AS u(a, m) GROUP BY a) AS delta
              JOIN wallets_account acc ON acc.id = delta.a
             WHERE acc.kind <> 'platform' AND acc.balance + delta.d < 0;
            RAISE EXCEPTION 'insufficient funds in %', array_to_string(short, ', ')
                USING ERRCODE = 'RL004', DETAIL = array_to_string(short, ',');
        END IF;

        INSERT INTO wallets_entry (transfer_id, account_id, amount, amount_currency, created_at)
        SELECT ids[t], a, m, c, now()
          FROM unnest(e_transfer, e_account, e_amount, e_currency) AS u(t, a, m, c)
         WHERE all_new OR ids[t] = ANY(new_ids);
    END IF;

    RETURN QUERY SELECT u.id, u.id = ANY(new_ids) FROM unnest(ids) AS u(id);
END;
$$;
