"""Finance staff's roles as groups, and the indexes their admin pages need.

Roles:
- finance viewer: view everything in the ledger and the games;
- finance operator: viewer + propose adjustments and reversals, start a reconciliation, import
  gateway statements, issue and deactivate API clients, edit game templates;
- finance approver: viewer + approve or reject what an operator proposed (never their own: the
  services and a CHECK constraint refuse it).
The indexes are plain SQL (not model state): a BRIN index for entry date ranges on an
append-only table, and a pattern index for prefix search of transfer references (`game:12`).
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

VIEWER = "finance viewer"
OPERATOR = "finance operator"
APPROVER = "finance approver"

EXTRA = {
    OPERATOR: [
        "wallets.add_adjustment",
        "wallets.add_reversal",
        "wallets.run_reconciliation",
        "wallets.add_gatewaystatement",
        "wallets.add_apiclient",
        "wallets.change_apiclient",
        "tournaments.add_gametemplate",
        "tournaments.change_gametemplate",
    ],
    APPROVER: ["wallets.approve_adjustment", "wallets.approve_reversal"],
}


def _ensure_permissions(apps):
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None


def roles_create(apps, schema_editor):
    _ensure_permissions(apps)
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    views = list(
        Permission.objects.filter(
            content_type__app_label__in=["wallets", "tournaments"], codename__startswith="view_"
        )
    )
    for name in (VIEWER, OPERATOR, APPROVER):
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.add(*views)
        for perm in EXTRA.get(name, []):
            app_label, codename = perm.split(".")
            group.permissions.add(
                Permission.objects.get(content_type__app_label=app_label, codename=codename)
            )


def roles_delete(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=[VIEWER, OPERATOR, APPROVER]).delete()


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
