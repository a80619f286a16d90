"""What PostgreSQL itself guarantees about the ledger, and the posting function.

- `ledger_post_batch`: posts many transfers in one call. Idempotent by key (same key and same
  content returns the first transfer; different content raises RL001), locks the cached accounts it
  touches in id order (no deadlock between postings), refuses overdrafts with the account codes
  (RL004; the CHECK on wallets_account is the backstop), bounded lock wait (`lock_timeout`).
- `ledger_transfer_balanced`: a deferred constraint trigger: at commit, every transfer's entries
  are in their account's currency and sum to zero per currency.
- `ledger_append_only`: entries and transfers are never updated or deleted.
Error codes: RL001 idempotency conflict, RL002 unknown account, RL003 currency mismatch,
RL004 insufficient funds, RL005 unbalanced transfer, RL006 append-only.
"""

from django.db import migrations

POST_BATCH = r"""
CREATE FUNCTION ledger_post_batch(
    p_keys text[], p_kinds text[], p_refs text[], p_hashes text[], p_reverses bigint[],
    p_memos text[], e_transfer int[], e_account bigint[], e_amount numeric[], e_currency text[],
    p_lock_timeout text
) RETURNS TABLE (transfer_id bigint, created boolean)
LANGUAGE plpgsql AS $$
DECLARE
    new_ids bigint[];
    ids bigint[];
    mismatch text;
    bad_account bigint;
    short text[];
    na bigint[];
    nm numeric[];
    nc text[];
    nt bigint[];
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
        RETURNING id
    )
    SELECT coalesce(array_agg(id), '{}') INTO new_ids FROM ins;

    -- A new statement sees keys that concurrent transactions committed while we waited.
    SELECT array_agg(t.id ORDER BY u.ord),
           min(u.key) FILTER (WHERE t.content_hash <> p_hashes[u.ord])
      INTO ids, mismatch
      FROM unnest(p_keys) WITH ORDINALITY AS u(key, ord)
      JOIN wallets_transfer t ON t.idempotency_key = u.key;
    IF mismatch IS NOT NULL THEN
        RAISE EXCEPTION 'idempotency key % was already used for a different transfer', mismatch
            USING ERRCODE = 'RL001', DETAIL = mismatch;
    END IF;

    SELECT array_agg(ids[t]), array_agg(a), array_agg(m), array_agg(c)
      INTO nt, na, nm, nc
      FROM unnest(e_transfer, e_account, e_amount, e_currency) AS u(t, a, m, c)
     WHERE ids[t] = ANY(new_ids);

    IF nt IS NOT NULL THEN
        SELECT min(u.a) FILTER (WHERE acc.id IS NULL),
               min(acc.code) FILTER (WHERE acc.balance_currency <> u.c)
          INTO bad_account, mismatch
          FROM unnest(na, nc) AS u(a, c) LEFT JOIN wallets_account acc ON acc.id = u.a;
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
        SELECT t, a, m, c, now() FROM unnest(nt, na, nm, nc) AS u(t, a, m, c);
    END IF;

    RETURN QUERY SELECT u.id, u.id = ANY(new_ids) FROM unnest(ids) AS u(id);
END;
$$;
"""

BALANCED = r"""
CREATE FUNCTION ledger_transfer_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (
        SELECT 1 FROM wallets_entry e JOIN wallets_account a ON a.id = e.account_id
         WHERE e.transfer_id = NEW.transfer_id
         GROUP BY e.amount_currency
        HAVING sum(e.amount) <> 0 OR bool_or(a.balance_currency <> e.amount_currency)
    ) THEN
        RAISE EXCEPTION 'transfer % does not balance per currency', NEW.transfer_id
            USING ERRCODE = 'RL005';
    END IF;
    RETURN NULL;
END;
$$;
CREATE CONSTRAINT TRIGGER entry_transfer_balanced
    AFTER INSERT ON wallets_entry DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION ledger_transfer_balanced();

CREATE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% rows are append-only: post a reversal instead', TG_TABLE_NAME
        USING ERRCODE = 'RL006';
END;
$$;
CREATE TRIGGER entry_append_only BEFORE UPDATE OR DELETE ON wallets_entry
    FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
CREATE TRIGGER transfer_append_only BEFORE UPDATE OR DELETE ON wallets_transfer
    FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
"""

DROP = """
DROP TRIGGER IF EXISTS transfer_append_only ON wallets_transfer;
DROP TRIGGER IF EXISTS entry_append_only ON wallets_entry;
DROP TRIGGER IF EXISTS entry_transfer_balanced ON wallets_entry;
DROP FUNCTION IF EXISTS ledger_append_only();
DROP FUNCTION IF EXISTS ledger_transfer_balanced();
DROP FUNCTION IF EXISTS ledger_post_batch(
    text[], text[], text[], text[], bigint[], text[], int[], bigint[], numeric[], text[], text);
"""


class Migration(migrations.Migration):
    dependencies = [("wallets", "0001_initial")]

    operations = [migrations.RunSQL(POST_BATCH + BALANCED, DROP)]
