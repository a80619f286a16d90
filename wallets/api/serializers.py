from django.conf import settings
from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from rummy_ledger.api.fields import StrictCharField
from wallets.models import CASH
from wallets.money import AMOUNT_PATTERN, MoneyError, parse_amount

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
        return f"{value.amount:.2f}"


def reference_field() -> StrictCharField:
    """A gateway's reference, as the gateway sends it (a deposit's or withdrawal's natural key)."""
    return StrictCharField(
        max_length=100,
        validators=[
            RegexValidator(f"^{REFERENCE_PATTERN}\\Z", "A reference is 1 to 100 visible ASCII.")
        ],
    )


class DepositIn(serializers.Serializer):
    amount = AmountField()
    reference = reference_field()


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


class KycOut(serializers.Serializer):
    player_id = serializers.CharField()
    kyc_status = serializers.ChoiceField(choices=["none", "verified", "rejected"])
    pan = serializers.CharField(help_text="the current PAN (verified or last rejected)")
    reference = serializers.CharField(help_text="this report's reference")
    status = serializers.CharField(help_text="this report's status")


class WithdrawalIn(DepositIn):
    """The same shape as a deposit: an amount and the gateway's reference."""


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
