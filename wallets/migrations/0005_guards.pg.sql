-- The ledger's guards as 0005 installed them: 0002's functions, moved into a file unchanged.
-- ledger_transfer_balanced: a deferred constraint trigger; at commit, every transfer's entries are
--   in their account's currency and sum to zero per currency (RL005).
-- ledger_append_only: entries and transfers are never updated or deleted (RL006).
-- Frozen: a later version goes into a file of its own beside the migration that installs it.
CREATE OR REPLACE FUNCTION ledger_transfer_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
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
