-- What PostgreSQL itself guarantees about the ledger.
-- ledger_transfer_balanced: a deferred constraint trigger; at commit, every transfer's entries are
--   in their account's currency and sum to zero per currency (RL005).
-- ledger_append_only: entries and transfers are never updated or deleted (RL006).
-- As 0006 installed them: the balance check uses keyed lookups only. Frozen: a later version goes
-- into a file of its own beside the migration that installs it (wallets/models/sql.py).
CREATE OR REPLACE FUNCTION ledger_transfer_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Keyed lookups only, so the plan cannot degrade whatever the statistics say (before ANALYZE
    -- a join planned a scan of every account for every entry): the transfer's entries by its
    -- index, each entry's account by primary key in a correlated subquery.
    IF EXISTS (
        SELECT 1
          FROM (SELECT e.amount, e.amount_currency,
                       (SELECT a.balance_currency FROM wallets_account a
                         WHERE a.id = e.account_id) AS account_currency
                  FROM wallets_entry e
                 WHERE e.transfer_id = NEW.transfer_id) AS x
         GROUP BY x.amount_currency
        HAVING sum(x.amount) <> 0
            OR bool_or(x.account_currency IS DISTINCT FROM x.amount_currency)
    ) THEN
        RAISE EXCEPTION 'transfer % does not balance per currency', NEW.transfer_id
            USING ERRCODE = 'RL005';
    END IF;
    RETURN NULL;
END;
$$;
DROP TRIGGER IF EXISTS entry_transfer_balanced ON wallets_entry;
CREATE CONSTRAINT TRIGGER entry_transfer_balanced
    AFTER INSERT ON wallets_entry DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION ledger_transfer_balanced();

CREATE OR REPLACE FUNCTION ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% rows are append-only: post a reversal instead', TG_TABLE_NAME
        USING ERRCODE = 'RL006';
END;
$$;
CREATE OR REPLACE TRIGGER entry_append_only BEFORE UPDATE OR DELETE ON wallets_entry
    FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
CREATE OR REPLACE TRIGGER transfer_append_only BEFORE UPDATE OR DELETE ON wallets_transfer
    FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
