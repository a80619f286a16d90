"""A pool split by drop value (`split_policy` "drop_value", longer than the old 8
characters), Rummy 500 tables of up to 8 seats (each format checks its own bounds), and a deal's
discrepancies also record the outcomes the cards overruled."""

import django.core.validators
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("tournaments", "0002_deal_transfers"),
    ]

    operations = [
        migrations.AlterField(
            model_name="deal",
            name="discrepancies",
            field=models.JSONField(
                default=dict,
                help_text="For finance, per player: claimed points that differ from the engine's (claimed, computed) and outcomes the cards overruled (posted_outcome, scored_outcome).",
            ),
        ),
        migrations.AlterField(
            model_name="gametemplate",
            name="seats",
            field=models.PositiveSmallIntegerField(
                default=6,
                help_text="Most players at a table: 2 to 6 (13-card formats), 2 to 8 (Rummy 500).",
                validators=[
                    django.core.validators.MinValueValidator(2),
                    django.core.validators.MaxValueValidator(8),
                ],
            ),
        ),
        migrations.AlterField(
            model_name="gametemplate",
            name="split_policy",
            field=models.CharField(
                choices=[
                    ("none", "No split"),
                    ("equal", "Equal shares"),
                    ("drops", "In proportion to drops left + 1"),
                    ("drop_value", "Entry fee per drop above the fewest, the rest equally"),
                ],
                default="none",
                max_length=16,
            ),
        ),
    ]
