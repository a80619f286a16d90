-- gst_rate_history_frozen (RL008), on GST rates by date (wallets.models.gst): a rate in force
-- or past is history. No row whose first IST day is today or earlier is inserted, changed or
-- removed; only future ones (added by an approved GstRateProposal). The data migration seeds
-- the past rates before this is installed.
CREATE OR REPLACE FUNCTION gst_rate_history_frozen() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    today date := (now() AT TIME ZONE 'Asia/Kolkata')::date;
BEGIN
    IF TG_OP <> 'INSERT' AND OLD.effective_from <= today THEN
        RAISE EXCEPTION 'the GST rate from % is in force or past: it is never changed',
            OLD.effective_from USING ERRCODE = 'RL008';
    END IF;
    IF TG_OP <> 'DELETE' AND NEW.effective_from <= today THEN
        RAISE EXCEPTION 'a GST rate from % would apply to the past: only future rates are added',
            NEW.effective_from USING ERRCODE = 'RL008';
    END IF;
    RETURN CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
END;
$$;
CREATE OR REPLACE TRIGGER gstrate_history_frozen BEFORE INSERT OR UPDATE OR DELETE
    ON wallets_gstrate FOR EACH ROW EXECUTE FUNCTION gst_rate_history_frozen();

-- The rate a deposit was taxed at is part of its record: append-only like the ledger.
CREATE OR REPLACE TRIGGER depositgst_append_only BEFORE UPDATE OR DELETE ON wallets_depositgst
    FOR EACH ROW EXECUTE FUNCTION ledger_append_only();
