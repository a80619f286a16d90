from django.db import migrations

APPEND_ONLY = """
CREATE OR REPLACE FUNCTION staff_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the staff audit list is append-only';
END $$;
CREATE OR REPLACE TRIGGER staff_auditevent_append_only BEFORE UPDATE OR DELETE
    ON staff_auditevent FOR EACH ROW EXECUTE FUNCTION staff_audit_append_only();
"""
DROP = """
DROP TRIGGER IF EXISTS staff_auditevent_append_only ON staff_auditevent;
DROP FUNCTION IF EXISTS staff_audit_append_only();
"""


class Migration(migrations.Migration):
    dependencies = [("staff", "0001_initial")]
    operations = [migrations.RunSQL(APPEND_ONLY, DROP)]
