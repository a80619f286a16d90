"""Finance staff's roles as groups (`wallets.roles`), and the indexes their admin pages need:
a BRIN index for entry date ranges on an append-only table, and a pattern index for prefix
search of transfer references (`game:12`). The indexes entered the models' state in 0005.
"""

from django.db import migrations

from wallets import roles


def roles_create(apps, schema_editor):
    roles.roles_ensure(apps, using=schema_editor.connection.alias)


def roles_delete(apps, schema_editor):
    groups = apps.get_model("auth", "Group").objects.using(schema_editor.connection.alias)
    groups.filter(name__in=roles.ROLES).delete()


INDEXES = """
CREATE INDEX IF NOT EXISTS entry_created_brin ON wallets_entry USING brin (created_at);
CREATE INDEX IF NOT EXISTS transfer_reference_prefix_idx
    ON wallets_transfer (reference varchar_pattern_ops);
"""
DROP_INDEXES = """
DROP INDEX IF EXISTS transfer_reference_prefix_idx;
DROP INDEX IF EXISTS entry_created_brin;
"""


class Migration(migrations.Migration):
    dependencies = [
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        ("wallets", "0003_finance"),
        ("tournaments", "0001_initial"),
    ]

    operations = [
        migrations.RunSQL(INDEXES, DROP_INDEXES),
        migrations.RunPython(roles_create, roles_delete),
    ]
