"""The deferred balance trigger's query uses keyed lookups only (its plan no longer
depends on table statistics); installs its own version, 0006_guards.pg.sql."""

from django.db import migrations

from wallets.models import sql


class Migration(migrations.Migration):
    dependencies = [("wallets", "0005_relations_sql_indexes")]

    operations = [migrations.RunSQL(sql.load("0006_guards.pg.sql"), migrations.RunSQL.noop)]
