-- What PostgreSQL itself guarantees about the ledger, on the entries partitioned by IST month.
-- ledger_transfer_balanced: a deferred constraint trigger; at commit, a transfer's entries of the
--   month of the new entry are in their account's currency and sum to zero per currency (RL005).
--   A posting dates all its entries with its transaction's now(), so a transfer lives in one
--   month; looking in that month only reads one partition, however many months there are, and a
--   transfer balanced in each month is balanced as a whole (the check is, if anything, stricter).
-- ledger_month_closed: installed on the partition of a closed month (wallets.services.months),
--   it refuses any entry dated in that month (RL008); the open months pay nothing for it.
-- ledger_append_only (0006's, unchanged): entries and transfers are never updated or deleted.
-- As 0020 installed them. Frozen: a later version goes into a file of its own beside the
-- migration that installs it (wallets/models/sql.py).
CREATE OR REPLACE FUNCTION ledger_transfer_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    month_start timestamptz := date_trunc('month', NEW.created_at AT TIME ZONE 'Asia/Kolkata')
                               AT TIME ZONE 'Asia/Kolkata';
    month_end timestamptz := (date_trunc('month', NEW.created_at AT TIME ZONE 'Asia/Kolkata')
                              + interval '1 month') AT TIME ZONE 'Asia/Kolkata';
BEGIN
    -- Keyed lookups only, so the plan cannot degrade whatever the statistics say: the
    -- transfer's entries by its index in one month's partition, each entry's account by
    -- primary key in a correlated subquery.
    IF EXISTS (
        SELECT 1
          FROM (SELECT e.amount, e.amount_currency,
                       (SELECT a.balance_currency FROM wallets_account a
                         WHERE a.id = e.account_id) AS account_currency
                  FROM wallets_entry e
                 WHERE e.transfer_id = NEW.transfer_id
                   AND e.created_at >= month_start AND e.created_at < month_end) AS x
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
CREATE OR REPLACE TRIGGER entry_append_only BEFORE UPDATE OR DELETE ON wallets_entry
    FOR EACH ROW EXECUTE FUNCTION ledger_append_only();

CREATE OR REPLACE FUNCTION ledger_month_closed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the month of % is closed: post an adjustment in the open month',
        NEW.created_at USING ERRCODE = 'RL008', DETAIL = TG_TABLE_NAME;
END;
$$;
