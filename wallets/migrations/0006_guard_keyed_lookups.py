"""Issue 12: the deferred balance trigger's query uses keyed lookups only (its plan no longer
depends on table statistics); reloads wallets/sql/guards.sql."""

from django.db import migrations

from wallets import sql


class Migration(migrations.Migration):
    dependencies = [("wallets", "0005_relations_sql_indexes")]

    operations = [migrations.RunSQL(sql.load("guards.sql"), migrations.RunSQL.noop)]
