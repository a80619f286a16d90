"""Finance staff's roles as groups: one service, used by the data migration, by every `migrate`
and `flush` (post_migrate: a flushed test database gets them back), and by `seed_demo`.

- finance viewer: view everything of the apps that take part;
- finance operator: viewer + what the apps grant operators (propose adjustments and reversals,
  start a reconciliation, import gateway statements, ...);
- finance approver: viewer + approve or reject what an operator proposed (never their own).

An app takes part by giving its AppConfig `finance_permissions = {role: [codename, ...]}`
(an empty dict still gives viewers its `view_` permissions), so this module names no other
app's permissions.

The groups hold exactly what the code grants: a permission taken out of `finance_permissions`
(as `add_apiclient` was from operators: API clients are a superuser's) is taken from the group
at the next `migrate`, not left behind on every database that had it.
"""

from __future__ import annotations

from django.apps import apps as global_apps
from django.contrib.auth.management import create_permissions
from django.db import DEFAULT_DB_ALIAS
from django.db.models import Q

VIEWER = "finance viewer"
OPERATOR = "finance operator"
APPROVER = "finance approver"
ROLES = (VIEWER, OPERATOR, APPROVER)


def _participants() -> dict[str, dict[str, list[str]]]:
    """app label -> its `finance_permissions`, for every installed app that declares them."""
    return {
        config.label: config.finance_permissions
        for config in global_apps.get_app_configs()
        if hasattr(config, "finance_permissions")
    }


def roles_ensure(apps=global_apps, using: str = DEFAULT_DB_ALIAS) -> None:
    """Create the groups and set their permissions to exactly the granted ones (idempotent;
    `apps` may be a migration's historical registry, `using` the database it migrates: a
    migration run on another database never writes to the default one)."""
    for app_config in apps.get_app_configs():  # make the permissions now, whatever the order
        models_module = getattr(app_config, "models_module", None)
        app_config.models_module = models_module or True  # historical configs have none
        create_permissions(app_config, apps=apps, verbosity=0, using=using)
        app_config.models_module = models_module
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    participants = _participants()
    views = list(
        Permission.objects.using(using).filter(
            content_type__app_label__in=list(participants), codename__startswith="view_"
        )
    )
    for role in ROLES:
        group, _ = Group.objects.using(using).get_or_create(name=role)
        granted = Q(pk__in=[])
        for label, grants in participants.items():
            granted |= Q(content_type__app_label=label, codename__in=grants.get(role, []))
        group.permissions.set([*views, *Permission.objects.using(using).filter(granted)])


def roles_after_migrate(sender, using: str = DEFAULT_DB_ALIAS, **kwargs) -> None:
    """post_migrate handler (connected by the wallets app): once per migrate or flush, on the
    database migrated."""
    if sender.name == "wallets":
        roles_ensure(using=using)
