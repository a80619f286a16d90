"""Money in and out: KYC on the player (and its history), withdrawals and their
review, TDS year ends, and the `pending` bucket (withdrawals on their way out), which every
existing player gets here (new players get it from `player_get_or_create`). No transfer is
rewritten: deposits stored before GST keep their shape.
"""

import django.db.models.deletion
import django.db.models.expressions
import django.db.models.functions.datetime
import djmoney.models.fields
from django.conf import settings
from django.db import migrations, models

from wallets import references


def pending_accounts(apps, schema_editor):
    """A `pending` account (INR, balance 0) for every player who has none yet."""
    Player = apps.get_model("wallets", "Player")
    Account = apps.get_model("wallets", "Account")
    db = schema_editor.connection.alias
    players = Player.objects.using(db).exclude(accounts__bucket="pending").order_by("pk")
    batch = []
    for player in players.iterator(chunk_size=5000):
        batch.append(
            Account(
                kind="player",
                code=references.player_account_code(player.external_id, "pending"),
                player=player,
                bucket="pending",
                balance=0,
                balance_currency="INR",
            )
        )
        if len(batch) == 5000:
            Account.objects.using(db).bulk_create(batch, ignore_conflicts=True)
            batch = []
    Account.objects.using(db).bulk_create(batch, ignore_conflicts=True)


def no_pending_accounts(apps, schema_editor):
    """Backwards: drop the pending accounts that never held anything."""
    Account = apps.get_model("wallets", "Account")
    Account.objects.using(schema_editor.connection.alias).filter(
        bucket="pending", kind="player", entries__isnull=True
    ).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("wallets", "0007_ledger_max_transfer"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="KycRecord",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("pan", models.CharField(max_length=10)),
                (
                    "status",
                    models.CharField(
                        choices=[("verified", "verified"), ("rejected", "rejected")], max_length=16
                    ),
                ),
                ("reference", models.CharField(max_length=100, unique=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "verbose_name": "KYC record",
            },
        ),
        migrations.CreateModel(
            name="TdsYearEnd",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("fy", models.CharField(help_text="2026-27", max_length=7)),
                (
                    "as_of",
                    models.DateTimeField(help_text="the closing balance's moment (the FY's end)"),
                ),
                (
                    "opening",
                    models.DecimalField(
                        decimal_places=2,
                        help_text="deposit + winnings at the FY's start",
                        max_digits=18,
                    ),
                ),
                (
                    "deposits",
                    models.DecimalField(
                        decimal_places=2,
                        help_text="credited to the deposit bucket in the FY (net of GST)",
                        max_digits=18,
                    ),
                ),
                (
                    "withdrawals",
                    models.DecimalField(
                        decimal_places=2,
                        help_text="withdrawn in the FY (failed and rejected ones excluded)",
                        max_digits=18,
                    ),
                ),
                (
                    "closing",
                    models.DecimalField(
                        decimal_places=2,
                        help_text="deposit + winnings at the FY's end",
                        max_digits=18,
                    ),
                ),
                (
                    "taxed_before",
                    models.DecimalField(
                        decimal_places=2,
                        help_text="net winnings already taxed at withdrawals",
                        max_digits=18,
                    ),
                ),
                (
                    "net_winnings",
                    models.DecimalField(
                        decimal_places=2,
                        help_text="the year end's net winnings (may be < 0)",
                        max_digits=18,
                    ),
                ),
                (
                    "tds",
                    models.DecimalField(
                        decimal_places=2, help_text="TDS due on them", max_digits=18
                    ),
                ),
                (
                    "withheld",
                    models.DecimalField(
                        decimal_places=2,
                        help_text="TDS withheld: from winnings, then deposit",
                        max_digits=18,
                    ),
                ),
                (
                    "carry_forward",
                    models.DecimalField(
                        decimal_places=2,
                        help_text="closing - withheld: the next FY's opening",
                        max_digits=18,
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "verbose_name": "TDS year end",
            },
        ),
        migrations.CreateModel(
            name="Withdrawal",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "reference",
                    models.CharField(
                        help_text="the gateway's request", max_length=100, unique=True
                    ),
                ),
                (
                    "amount_currency",
                    djmoney.models.fields.CurrencyField(
                        choices=[("INR", "Indian rupee"), ("CHP", "Practice chips")],
                        default="INR",
                        editable=False,
                        max_length=3,
                    ),
                ),
                ("amount", djmoney.models.fields.MoneyField(decimal_places=2, max_digits=18)),
                (
                    "net_winnings",
                    models.DecimalField(
                        decimal_places=2,
                        help_text="net winnings of the FY at this withdrawal (Rule 133; may be < 0)",
                        max_digits=18,
                    ),
                ),
                (
                    "taxed_net_winnings",
                    models.DecimalField(
                        decimal_places=2,
                        help_text="the part of them taxed now (0 when no TDS was withheld)",
                        max_digits=18,
                    ),
                ),
                (
                    "tds_currency",
                    djmoney.models.fields.CurrencyField(
                        choices=[("INR", "Indian rupee"), ("CHP", "Practice chips")],
                        default="INR",
                        editable=False,
                        max_length=3,
                    ),
                ),
                ("tds", djmoney.models.fields.MoneyField(decimal_places=2, max_digits=18)),
                (
                    "payout_currency",
                    djmoney.models.fields.CurrencyField(
                        choices=[("INR", "Indian rupee"), ("CHP", "Practice chips")],
                        default="INR",
                        editable=False,
                        max_length=3,
                    ),
                ),
                (
                    "payout",
                    djmoney.models.fields.MoneyField(
                        decimal_places=2,
                        help_text="amount - TDS: what the gateway pays out",
                        max_digits=18,
                    ),
                ),
                (
                    "pan",
                    models.CharField(help_text="the player's PAN when requested", max_length=10),
                ),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("requested", "Requested"),
                            ("approved", "Approved"),
                            ("paid", "Paid"),
                            ("failed", "Failed"),
                            ("rejected", "Rejected"),
                        ],
                        default="requested",
                        max_length=16,
                    ),
                ),
                (
                    "needs_approval",
                    models.BooleanField(help_text="large or first: waits for finance"),
                ),
                (
                    "requested_at",
                    models.DateTimeField(
                        db_default=django.db.models.functions.datetime.Now(),
                        help_text="its ledger time",
                    ),
                ),
                ("decided_at", models.DateTimeField(blank=True, null=True)),
                (
                    "settled_at",
                    models.DateTimeField(blank=True, help_text="paid or failed", null=True),
                ),
                (
                    "gateway_reference",
                    models.CharField(blank=True, max_length=100, null=True, unique=True),
                ),
                ("failure_reason", models.CharField(blank=True, max_length=255)),
            ],
        ),
        migrations.CreateModel(
            name="WithdrawalReview",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("reason", models.TextField()),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("proposed", "Proposed"),
                            ("approved", "Approved"),
                            ("rejected", "Rejected"),
                        ],
                        default="proposed",
                        max_length=16,
                    ),
                ),
                ("proposed_at", models.DateTimeField(auto_now_add=True)),
                ("decided_at", models.DateTimeField(blank=True, null=True)),
                ("decision_note", models.CharField(blank=True, max_length=255)),
            ],
            options={
                "permissions": [
                    ("approve_withdrawal", "Can approve or reject reviewed withdrawals")
                ],
                "abstract": False,
            },
        ),
        migrations.AddField(
            model_name="player",
            name="kyc_status",
            field=models.CharField(
                choices=[("none", "None"), ("verified", "Verified"), ("rejected", "Rejected")],
                db_default="none",
                default="none",
                max_length=16,
            ),
        ),
        migrations.AddField(
            model_name="player",
            name="kyc_updated_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="player",
            name="pan",
            field=models.CharField(blank=True, db_default="", default="", max_length=10),
        ),
        migrations.AlterField(
            model_name="account",
            name="bucket",
            field=models.CharField(
                blank=True,
                choices=[
                    ("deposit", "Deposit"),
                    ("winnings", "Winnings"),
                    ("bonus", "Bonus"),
                    ("chips", "Chips"),
                    ("pending", "pending withdrawal"),
                ],
                max_length=16,
            ),
        ),
        migrations.AlterField(
            model_name="adjustment",
            name="bucket",
            field=models.CharField(
                choices=[
                    ("deposit", "Deposit"),
                    ("winnings", "Winnings"),
                    ("bonus", "Bonus"),
                    ("chips", "Chips"),
                    ("pending", "pending withdrawal"),
                ],
                max_length=16,
            ),
        ),
        migrations.AlterField(
            model_name="transfer",
            name="kind",
            field=models.CharField(
                choices=[
                    ("deposit", "Deposit"),
                    ("withdrawal", "Withdrawal"),
                    ("entry", "Entry"),
                    ("refund", "Refund"),
                    ("settlement", "Settlement"),
                    ("chips_grant", "Chips Grant"),
                    ("adjustment", "Adjustment"),
                    ("reversal", "Reversal"),
                    ("transfer", "Transfer"),
                    ("bonus", "Bonus"),
                    ("tax", "Tax"),
                ],
                max_length=16,
            ),
        ),
        migrations.AddConstraint(
            model_name="player",
            constraint=models.UniqueConstraint(
                condition=models.Q(("kyc_status", "verified")),
                fields=("pan",),
                name="player_verified_pan_unique",
                violation_error_message="This PAN is verified for another player.",
            ),
        ),
        migrations.AddConstraint(
            model_name="player",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("kyc_status", "verified"), _negated=True),
                    models.Q(("pan", ""), _negated=True),
                    _connector="OR",
                ),
                name="player_verified_has_pan",
            ),
        ),
        migrations.AddField(
            model_name="kycrecord",
            name="player",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="kyc_records",
                to="wallets.player",
            ),
        ),
        migrations.AddField(
            model_name="tdsyearend",
            name="player",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="tds_year_ends",
                to="wallets.player",
            ),
        ),
        migrations.AddField(
            model_name="tdsyearend",
            name="transfer",
            field=models.OneToOneField(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="tds_year_end",
                to="wallets.transfer",
            ),
        ),
        migrations.AddField(
            model_name="withdrawal",
            name="approval_transfer",
            field=models.OneToOneField(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="withdrawal_approved",
                to="wallets.transfer",
            ),
        ),
        migrations.AddField(
            model_name="withdrawal",
            name="player",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="withdrawals",
                to="wallets.player",
            ),
        ),
        migrations.AddField(
            model_name="withdrawal",
            name="request_transfer",
            field=models.OneToOneField(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="withdrawal_requested",
                to="wallets.transfer",
            ),
        ),
        migrations.AddField(
            model_name="withdrawal",
            name="return_transfer",
            field=models.OneToOneField(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="withdrawal_returned",
                to="wallets.transfer",
            ),
        ),
        migrations.AddField(
            model_name="withdrawalreview",
            name="decided_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="withdrawalreview",
            name="proposed_by",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="withdrawalreview",
            name="withdrawal",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="review",
                to="wallets.withdrawal",
            ),
        ),
        migrations.AddIndex(
            model_name="kycrecord",
            index=models.Index(fields=["player", "created_at"], name="kycrecord_player_idx"),
        ),
        migrations.AddIndex(
            model_name="tdsyearend",
            index=models.Index(fields=["fy"], name="tdsyearend_fy_idx"),
        ),
        migrations.AddConstraint(
            model_name="tdsyearend",
            constraint=models.UniqueConstraint(
                fields=("player", "fy"), name="tdsyearend_one_per_player_fy"
            ),
        ),
        migrations.AddConstraint(
            model_name="tdsyearend",
            constraint=models.CheckConstraint(
                condition=models.Q(("withheld__gte", 0), ("withheld__lte", models.F("tds"))),
                name="tdsyearend_withheld",
            ),
        ),
        migrations.AddIndex(
            model_name="withdrawal",
            index=models.Index(
                fields=["player", "requested_at"], name="withdrawal_player_time_idx"
            ),
        ),
        migrations.AddIndex(
            model_name="withdrawal",
            index=models.Index(fields=["status", "requested_at"], name="withdrawal_status_idx"),
        ),
        migrations.AddIndex(
            model_name="withdrawal",
            index=models.Index(fields=["settled_at"], name="withdrawal_settled_idx"),
        ),
        migrations.AddConstraint(
            model_name="withdrawal",
            constraint=models.CheckConstraint(
                condition=models.Q(("amount__gt", 0), ("payout__gte", 0), ("tds__gte", 0)),
                name="withdrawal_amounts_valid",
            ),
        ),
        migrations.AddConstraint(
            model_name="withdrawal",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    (
                        "amount",
                        django.db.models.expressions.CombinedExpression(
                            models.F("tds"), "+", models.F("payout")
                        ),
                    )
                ),
                name="withdrawal_payout_is_net_of_tds",
            ),
        ),
        migrations.AddConstraint(
            model_name="withdrawal",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("gateway_reference__isnull", False), ("status", "paid")),
                    models.Q(
                        models.Q(("status", "paid"), _negated=True),
                        ("gateway_reference__isnull", True),
                    ),
                    _connector="OR",
                ),
                name="withdrawal_paid_has_gateway_reference",
            ),
        ),
        migrations.AddConstraint(
            model_name="withdrawalreview",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("decided_by__isnull", True),
                    models.Q(("decided_by", models.F("proposed_by")), _negated=True),
                    _connector="OR",
                ),
                name="withdrawalreview_not_decided_by_proposer",
                violation_error_message="A proposal is decided by someone other than its proposer.",
            ),
        ),
        migrations.RunPython(pending_accounts, no_pending_accounts),
    ]
