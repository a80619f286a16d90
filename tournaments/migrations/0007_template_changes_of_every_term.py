"""A template change proposes any of the template's terms, stored as JSON in `terms`.

The four money-term columns become `terms`. A change still waiting for its approver is completed
with the template's other terms in force (and so is what it was proposed from), so approving it
changes what it proposed and nothing else; decided changes keep their four terms, their story.
"""

from django.db import migrations, models

OTHER_TERMS = ("slug", "format", "seats", "deals", "rules", "split_policy", "rejoin_allowed",
               "entry_buckets", "bonus_cap_percent")  # fmt: skip


def _json(value):
    return (
        None
        if value is None
        else value
        if isinstance(value, (bool, int, dict, list))
        else str(value)
    )


def terms_from_columns(apps, schema_editor):
    TemplateChange = apps.get_model("tournaments", "TemplateChange")
    db = schema_editor.connection.alias  # the database being migrated, not always the default
    for change in TemplateChange.objects.using(db).select_related("template"):
        change.terms = {
            "currency": change.currency,
            "point_value": _json(change.point_value),
            "entry_fee": _json(change.entry_fee),
            "fee_percent": _json(change.fee_percent),
        }
        if change.status == "proposed":
            others = {name: _json(getattr(change.template, name)) for name in OTHER_TERMS}
            change.terms.update(others)
            change.previous = {**change.previous, **others}
        change.save(using=db, update_fields=["terms", "previous"])


class Migration(migrations.Migration):
    dependencies = [("tournaments", "0006_fee_days")]

    operations = [
        migrations.AddField(
            model_name="templatechange",
            name="terms",
            field=models.JSONField(
                default=dict,
                help_text="The proposed terms, every one of MONEY_TERMS (JSON).",
            ),
            preserve_default=False,
        ),
        migrations.RunPython(terms_from_columns, migrations.RunPython.noop),
        migrations.RemoveField(model_name="templatechange", name="currency"),
        migrations.RemoveField(model_name="templatechange", name="point_value"),
        migrations.RemoveField(model_name="templatechange", name="entry_fee"),
        migrations.RemoveField(model_name="templatechange", name="fee_percent"),
        migrations.AlterField(
            model_name="templatechange",
            name="previous",
            field=models.JSONField(
                help_text="The terms when proposed (JSON; decimals as strings)."
            ),
        ),
    ]
