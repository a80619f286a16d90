from django.conf import settings
from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from rummy_ledger.api.fields import StrictBooleanField, StrictCharField, StrictIntegerField
from wallets.amounts import amount_text
from wallets.models import CASH
from wallets.money import AMOUNT_PATTERN, MoneyError, parse_amount
from wallets.services.real_money import REGION_PATTERN

# A gateway's reference: visible ASCII (no spaces, no control characters), as it prints on the
# gateway's statement.
REFERENCE_PATTERN = r"[!-~]{1,100}"


@extend_schema_field(
    {
        "type": "string",
        "pattern": f"^{AMOUNT_PATTERN}$",
        "description": "A positive amount as a decimal string, at most the per-transfer maximum.",
        "example": "500.00",
    }
)
class AmountField(serializers.Field):
    """A positive INR amount given as a decimal string (`wallets.money.parse_amount`), at most
    the ledger's per-transfer maximum; every other form is refused, naming the field."""

    default_error_messages = {
        "positive": "The amount must be greater than zero.",
        "maximum": "The amount is above the per-transfer maximum of {maximum}.",
    }

    def to_internal_value(self, data):
        try:
            money = parse_amount(data, CASH)
        except MoneyError as exc:
            raise serializers.ValidationError(str(exc)) from exc
        if money.amount <= 0:
            self.fail("positive")
        if money.amount > settings.LEDGER_MAX_TRANSFER:
            self.fail("maximum", maximum=settings.LEDGER_MAX_TRANSFER)
        return money

    def to_representation(self, value):
        return amount_text(value.amount)


def reference_field() -> StrictCharField:
    """A gateway's reference, as the gateway sends it (a deposit's or withdrawal's natural key)."""
    return StrictCharField(
        max_length=100,
        validators=[
            RegexValidator(f"^{REFERENCE_PATTERN}\\Z", "A reference is 1 to 100 visible ASCII.")
        ],
    )


def region_field() -> StrictCharField:
    return StrictCharField(
        required=False,
        max_length=2,
        validators=[RegexValidator(f"^{REGION_PATTERN}\\Z", "A region is two capital letters.")],
        help_text="The player's Indian state or union territory code (ISO 3166-2:IN without "
        "`IN-`, e.g. `TN`); the real-money switch reads it (`REAL_MONEY=restricted`).",
    )


class DepositIn(serializers.Serializer):
    amount = AmountField()
    reference = reference_field()
    region = region_field()


class BalanceOut(serializers.Serializer):
    amount = serializers.CharField()
    currency = serializers.CharField()


class WalletOut(serializers.Serializer):
    player_id = serializers.CharField()
    balances = serializers.DictField(child=BalanceOut())


class DepositOut(WalletOut):
    transfer_id = serializers.IntegerField()
    reference = serializers.CharField()
    amount = serializers.CharField(help_text="what the player paid, GST included")
    gst = serializers.CharField(help_text="28/128 of the amount, to GST payable")
    credited = serializers.CharField(help_text="amount - gst, to the deposit bucket")


class KycIn(serializers.Serializer):
    pan = StrictCharField(max_length=20, help_text="ABCDE1234F")
    status = serializers.ChoiceField(choices=["verified", "rejected"])
    reference = reference_field()
    region = region_field()


class KycOut(serializers.Serializer):
    player_id = serializers.CharField()
    kyc_status = serializers.ChoiceField(choices=["none", "verified", "rejected"])
    pan = serializers.CharField(help_text="the current PAN (verified or last rejected)")
    reference = serializers.CharField(help_text="this report's reference")
    status = serializers.CharField(help_text="this report's status")


class WithdrawalIn(serializers.Serializer):
    """An amount and the gateway's reference."""

    amount = AmountField()
    reference = reference_field()


class WithdrawalOut(serializers.Serializer):
    withdrawal_id = serializers.IntegerField()
    reference = serializers.CharField()
    player_id = serializers.CharField()
    status = serializers.ChoiceField(
        choices=["requested", "approved", "paid", "failed", "rejected"]
    )
    amount = serializers.CharField()
    net_winnings = serializers.CharField(help_text="of the financial year at this withdrawal")
    tds = serializers.CharField()
    payout = serializers.CharField(help_text="amount - tds")
    needs_approval = serializers.BooleanField()
    gateway_reference = serializers.CharField(allow_null=True)
    failure_reason = serializers.CharField(allow_blank=True)
    balances = serializers.DictField(child=BalanceOut())


class WithdrawalPaidIn(serializers.Serializer):
    gateway_reference = reference_field()


class WithdrawalFailedIn(serializers.Serializer):
    reason = StrictCharField(max_length=255)


class YearEndOut(serializers.Serializer):
    as_of = serializers.DateTimeField()
    closing = serializers.CharField()
    net_winnings = serializers.CharField()
    tds = serializers.CharField()
    withheld = serializers.CharField()
    carry_forward = serializers.CharField()


class TaxStatementOut(serializers.Serializer):
    player_id = serializers.CharField()
    fy = serializers.CharField()
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    opening = serializers.CharField()
    deposits = serializers.CharField(help_text="credited to the deposit bucket, net of GST")
    withdrawals = serializers.CharField(help_text="failed and rejected ones excluded")
    withdrawal_count = serializers.IntegerField()
    net_winnings = serializers.CharField(help_text="taxed so far (withdrawals and year end)")
    tds = serializers.CharField(help_text="withheld so far")
    year_end = YearEndOut(allow_null=True)


@extend_schema_field(
    {
        "type": "string",
        "nullable": True,
        "pattern": f"^{AMOUNT_PATTERN}$",
        "description": "A positive amount as a decimal string, or null for no limit.",
        "example": "5000.00",
    }
)
class LimitField(serializers.Field):
    """A deposit limit in INR: a positive decimal string, or null for none."""

    def to_internal_value(self, data):
        try:
            money = parse_amount(data, CASH)
        except MoneyError as exc:
            raise serializers.ValidationError(str(exc)) from exc
        if money.amount <= 0:
            raise serializers.ValidationError("A limit is greater than zero; null for none.")
        return money.amount


class LimitsIn(serializers.Serializer):
    daily = LimitField(allow_null=True, help_text="INR a calendar day (IST); null: no limit")
    monthly = LimitField(allow_null=True, help_text="INR a calendar month (IST); null: no limit")


class SelfExclusionIn(serializers.Serializer):
    days = StrictIntegerField(
        required=False, min_value=1, max_value=36500, help_text="How long; or `permanent`."
    )
    permanent = StrictBooleanField(required=False, help_text="true: for good")

    def validate(self, attrs):
        if ("days" in attrs) == bool(attrs.get("permanent")):
            raise serializers.ValidationError('Give either "days" or "permanent": true.')
        return attrs


class PendingLimitOut(serializers.Serializer):
    limit = serializers.ChoiceField(choices=["daily", "monthly"])
    amount = serializers.CharField(allow_null=True, help_text="null: no limit")
    effective_at = serializers.DateTimeField()


class ProtectionOut(serializers.Serializer):
    player_id = serializers.CharField()
    daily_limit = serializers.CharField(allow_null=True, help_text="in effect now; null: none")
    monthly_limit = serializers.CharField(allow_null=True, help_text="in effect now; null: none")
    pending = PendingLimitOut(many=True, help_text="raised limits waiting for their delay")
    self_excluded = serializers.BooleanField()
    self_excluded_until = serializers.DateTimeField(
        allow_null=True, help_text="null: not excluded, or excluded permanently"
    )
    self_excluded_permanently = serializers.BooleanField()
