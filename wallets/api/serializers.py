"""The wallet endpoints' input serializers (strict: unknown fields refused) and their answers:
each `*Out` documents one answer, each `*_out` function builds it from what the services
returned, as the games' endpoints do (`tournaments.games.api.serializers`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.core.validators import RegexValidator
from django.utils import timezone
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from rummy_ledger.api.fields import (
    StrictBooleanField,
    StrictCharField,
    StrictIntegerField,
    StrictSerializer,
)
from rummy_ledger.api.paging import NEXT, PageQuery, query_parameter
from rummy_ledger.events.event_types import WITHDRAWAL_EVENTS, EventType
from rummy_ledger.events.renderers import Renderer
from wallets import selectors
from wallets.models import CASH, GatewayDeposit, KycRecord, Player, Withdrawal
from wallets.money.amounts import amount_text
from wallets.money.parsing import MoneyError, amount_pattern, parse_amount
from wallets.services import regions
from wallets.services.deposits import Deposit
from wallets.services.kyc import PAN_INPUT
from wallets.services.protection import Protection
from wallets.services.real_money import REGION_PATTERN
from wallets.tax.formulas import FinancialYear
from wallets.tax.tds import TaxPosition

# A gateway's reference: visible ASCII (no spaces, no control characters), as it prints on the
# gateway's statement.
REFERENCE_PATTERN = r"[!-~]{1,100}"


@extend_schema_field(
    {
        "type": "string",
        "pattern": amount_pattern(settings.LEDGER_MAX_TRANSFER),
        "description": "An amount in INR as a decimal string: 1 to 12 digits, optionally a point "
        f"and one or two decimals; above zero and at most {settings.LEDGER_MAX_TRANSFER} "
        "(`LEDGER_MAX_TRANSFER`). JSON numbers are refused.",
        "example": "500.00",
    }
)
class AmountField(serializers.Field):
    """A positive INR amount given as a decimal string (`wallets.money.parsing.parse_amount`), at
    most the ledger's per-transfer maximum; every other form is refused, naming the field."""

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


def reference_field(help_text: str) -> StrictCharField:
    """A gateway's reference, as the gateway sends it (a deposit's or withdrawal's natural key)."""
    return StrictCharField(
        max_length=100,
        help_text=f"{help_text} 1 to 100 visible ASCII.",
        validators=[
            RegexValidator(f"^{REFERENCE_PATTERN}\\Z", "A reference is 1 to 100 visible ASCII.")
        ],
    )


@extend_schema_field(
    {
        "type": "string",
        # the codes the server takes, retired ones too (else 400 region_invalid)
        "enum": sorted({*regions.REGIONS, *regions.ALIASES}),
    }
)
class RegionField(StrictCharField):
    pass


def region_field() -> StrictCharField:
    return RegionField(
        required=False,
        max_length=2,
        validators=[RegexValidator(f"^{REGION_PATTERN}\\Z", "A region is two capital letters.")],
        help_text="The player's Indian state or union territory: a current ISO 3166-2:IN code "
        "without `IN-` (e.g. `TN`, `TS`; a code retired in 2020 or 2023, such as `TG`, counts "
        "as its successor), else 400 `region_invalid`. The player's region is the most "
        "restrictive one reported; the real-money switch reads it (`REAL_MONEY=restricted`).",
    )


PLAYER_ID = "The player's external id."
BALANCES = "The player's balances by bucket: deposit, winnings, bonus, pending, chips."
AMOUNT_OUT = "A decimal string with two decimals, e.g. `500.00`."


@extend_schema_field(
    {
        "type": "string",
        "pattern": amount_pattern(settings.LEDGER_MAX_TRANSFER, minimum=settings.DEPOSIT_MINIMUM),
        "example": "500.00",
    }
)
class DepositAmountField(AmountField):
    """An amount at least the smallest deposit taken (`DEPOSIT_MINIMUM`; the service refuses a
    smaller one with 400 deposit_below_minimum), as the schema says."""


class DepositIn(StrictSerializer):
    amount = DepositAmountField(
        help_text="What the player paid, GST included: at least `DEPOSIT_MINIMUM` "
        f"({settings.DEPOSIT_MINIMUM}), at most `LEDGER_MAX_TRANSFER`."
    )
    reference = reference_field(
        "The gateway's payment reference: the deposit's natural key (the same one again is the "
        "same deposit, 200; with other content 409 `reference_conflict`)."
    )
    region = region_field()


class BalanceOut(serializers.Serializer):
    amount = serializers.CharField(help_text=AMOUNT_OUT)
    currency = serializers.CharField(help_text="`INR`, or `CHP` for practice chips.")


class WalletOut(serializers.Serializer):
    player_id = serializers.CharField(help_text=PLAYER_ID)
    balances = serializers.DictField(child=BalanceOut(), help_text=BALANCES)


class DepositOut(WalletOut):
    transfer_id = serializers.IntegerField(help_text="The ledger transfer that credited it.")
    reference = serializers.CharField(help_text="The gateway's payment reference.")
    amount = serializers.CharField(help_text="what the player paid, GST included")
    gst = serializers.CharField(help_text="rate/(100 + rate) of the amount, to GST payable")
    gst_rate = serializers.CharField(
        help_text="the GST rate in percent in force when it was recorded (IST), e.g. 40.00"
    )
    credited = serializers.CharField(help_text="amount - gst, to the deposit bucket")


@extend_schema_field(
    {
        "type": "string",
        "pattern": f"^(?!.*\\n){PAN_INPUT}$",
        "description": "The PAN: five letters, four digits, one letter (lower case is read as "
        "upper); anything else is 400 `pan_invalid`.",
        "example": "ABCDE1234F",
    }
)
class PanField(StrictCharField):
    def __init__(self, **kwargs):
        super().__init__(max_length=20, **kwargs)  # the service judges the form (pan_invalid)


class KycIn(StrictSerializer):
    pan = PanField()
    status = serializers.ChoiceField(
        choices=["verified", "rejected"], help_text="What the gateway's check found."
    )
    reference = reference_field("The gateway's KYC report reference: the report's natural key.")
    region = region_field()


class KycOut(serializers.Serializer):
    player_id = serializers.CharField(help_text=PLAYER_ID)
    kyc_status = serializers.ChoiceField(
        choices=["none", "verified", "rejected"],
        help_text="The player's KYC now: withdrawals need `verified`.",
    )
    pan = serializers.CharField(help_text="the current PAN (verified or last rejected)")
    reference = serializers.CharField(help_text="this report's reference")
    status = serializers.CharField(help_text="this report's status")


class WithdrawalIn(StrictSerializer):
    """An amount and the gateway's reference."""

    amount = AmountField(help_text="What to take from winnings, TDS included.")
    reference = reference_field(
        "The gateway's withdrawal reference: the withdrawal's natural key (the same one with the "
        "same player and amount is the same withdrawal, 200; otherwise 409)."
    )


# A withdrawal's states, as the answers list them (one enum in OpenAPI: ENUM_NAME_OVERRIDES).
WITHDRAWAL_STATUSES = ["requested", "approved", "paid", "failed", "rejected"]


# A withdrawal as `GET /withdrawals/{withdrawal_id}` answers it: the POST's answer without the
# player's balances. (No docstring: the schema would show it on `WithdrawalOut` too.)
class WithdrawalRecordOut(serializers.Serializer):
    withdrawal_id = serializers.IntegerField(help_text="For `/paid` and `/failed`.")
    reference = serializers.CharField(help_text="The gateway's withdrawal reference.")
    player_id = serializers.CharField(help_text=PLAYER_ID)
    status = serializers.ChoiceField(
        choices=WITHDRAWAL_STATUSES,
        help_text="`requested` waits for finance; `approved` is the gateway's to pay.",
    )
    amount = serializers.CharField(help_text="Taken from the wallet: payout + TDS.")
    from_winnings = serializers.CharField(help_text="the part taken from winnings")
    from_deposit = serializers.CharField(
        help_text="the part taken from the deposit bucket: only when real money is off for the "
        "player (a refund), after the winnings"
    )
    net_winnings = serializers.CharField(help_text="of the financial year at this withdrawal")
    tds = serializers.CharField(help_text="Withheld (s.194BA): 30 % of the net winnings above 0.")
    payout = serializers.CharField(help_text="amount - tds")
    needs_approval = serializers.BooleanField(
        help_text="True: finance reviews and approves it (a first or large withdrawal)."
    )
    gateway_reference = serializers.CharField(
        allow_null=True, help_text="The gateway's payment reference once paid; else null."
    )
    failure_reason = serializers.CharField(
        allow_blank=True, help_text="Why the gateway could not pay; empty otherwise."
    )


class WithdrawalOut(WithdrawalRecordOut):
    balances = serializers.DictField(child=BalanceOut(), help_text=BALANCES)


class WithdrawalsOut(serializers.Serializer):
    withdrawals = WithdrawalRecordOut(
        many=True, help_text="The client's withdrawals, oldest first."
    )
    next = serializers.CharField(allow_null=True, help_text=NEXT)


class DepositsOut(serializers.Serializer):
    deposits = DepositOut(
        many=True,
        help_text="The client's deposits, oldest first, each as the deposit's POST answers it "
        "again (the player's balances now).",
    )
    next = serializers.CharField(allow_null=True, help_text=NEXT)


class ByReferenceQuery(PageQuery):
    reference = StrictCharField(
        required=False,
        validators=[
            RegexValidator(f"^{REFERENCE_PATTERN}\\Z", "A reference is 1 to 100 visible ASCII.")
        ],
    )


# The `reference` filter of the deposits' and withdrawals' lists, as the schema shows it.
REFERENCE_PARAMETER = query_parameter(
    "reference",
    {"type": "string", "pattern": f"^(?!.*\\n){REFERENCE_PATTERN}$"},
    "Only the one with this gateway reference (1 to 100 visible ASCII; all when absent).",
)


class WithdrawalPaidIn(StrictSerializer):
    gateway_reference = reference_field(
        "The gateway's payment reference (one payment, one withdrawal)."
    )


class WithdrawalFailedIn(StrictSerializer):
    reason = StrictCharField(max_length=255, help_text="Why the gateway could not pay.")


class YearEndOut(serializers.Serializer):
    as_of = serializers.DateTimeField(help_text="The moment the year was closed at.")
    closing = serializers.CharField(help_text="Deposit + winnings at the year's end.")
    net_winnings = serializers.CharField(help_text="Taxed at the year end.")
    tds = serializers.CharField(help_text="Due at the year end.")
    withheld = serializers.CharField(help_text="Withheld from the balance (may fall short).")
    carry_forward = serializers.CharField(help_text="closing - withheld: next year's opening.")


class TaxStatementOut(serializers.Serializer):
    player_id = serializers.CharField(help_text=PLAYER_ID)
    fy = serializers.CharField(help_text="The financial year, e.g. `2026-27`.")
    start = serializers.DateTimeField(help_text="1 April, 00:00 IST.")
    end = serializers.DateTimeField(help_text="The next 1 April, 00:00 IST (excluded).")
    opening = serializers.CharField(help_text="Deposit + winnings at the year's start.")
    deposits = serializers.CharField(help_text="credited to the deposit bucket, net of GST")
    withdrawals = serializers.CharField(help_text="failed and rejected ones excluded")
    withdrawal_count = serializers.IntegerField(help_text="Those withdrawals.")
    net_winnings = serializers.CharField(help_text="taxed so far (withdrawals and year end)")
    tds = serializers.CharField(help_text="withheld so far")
    year_end = YearEndOut(allow_null=True, help_text="The year's close; null while it is open.")


@extend_schema_field(
    {
        "type": "string",
        "nullable": True,
        "pattern": amount_pattern(),
        "description": "An amount in INR as a decimal string above zero (1 to 12 digits, "
        "optionally a point and one or two decimals), or null for no limit.",
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


class LimitsIn(StrictSerializer):
    daily = LimitField(allow_null=True, help_text="INR a calendar day (IST); null: no limit")
    monthly = LimitField(allow_null=True, help_text="INR a calendar month (IST); null: no limit")


class SelfExclusionIn(StrictSerializer):
    days = StrictIntegerField(
        required=False, min_value=1, max_value=36500, help_text="How long; or `permanent`."
    )
    permanent = StrictBooleanField(required=False, help_text="true: for good")

    def validate(self, attrs):
        if ("days" in attrs) == bool(attrs.get("permanent")):
            raise serializers.ValidationError('Give either "days" or "permanent": true.')
        return attrs


class SelfExclusionInScheme(OpenApiSerializerExtension):
    """OpenAPI: `days`, or `"permanent": true`, never both nor neither (what `validate` says)."""

    target_class = SelfExclusionIn

    def map_serializer(self, auto_schema, direction):
        schema = auto_schema._map_serializer(self.target, direction, bypass_extensions=True)
        # `not` around the enums: drf-spectacular's enum hook would make one component of both
        schema["oneOf"] = [
            {"required": ["days"], "properties": {"permanent": {"not": {"enum": [True]}}}},
            {"required": ["permanent"], "properties": {"permanent": {"not": {"enum": [False]}}},
             "not": {"required": ["days"]}},
        ]  # fmt: skip
        return schema


class PendingLimitOut(serializers.Serializer):
    limit = serializers.ChoiceField(choices=["daily", "monthly"], help_text="Which limit.")
    amount = serializers.CharField(allow_null=True, help_text="null: no limit")
    effective_at = serializers.DateTimeField(help_text="When it counts.")


class ProtectionOut(serializers.Serializer):
    player_id = serializers.CharField(help_text=PLAYER_ID)
    daily_limit = serializers.CharField(allow_null=True, help_text="in effect now; null: none")
    monthly_limit = serializers.CharField(allow_null=True, help_text="in effect now; null: none")
    pending = PendingLimitOut(many=True, help_text="raised limits waiting for their delay")
    self_excluded = serializers.BooleanField(help_text="Excluded now: no cash games, no deposits.")
    self_excluded_until = serializers.DateTimeField(
        allow_null=True, help_text="null: not excluded, or excluded permanently"
    )
    self_excluded_permanently = serializers.BooleanField(help_text="Excluded for good.")


# --- the answers, built from what the services returned ----------------------------------------


def _money(value) -> str:
    return amount_text(getattr(value, "amount", value))


def _limit(value) -> str | None:
    return None if value is None else _money(value)


def wallet_out(player: Player) -> dict[str, Any]:
    return {"player_id": player.external_id, "balances": selectors.wallet_balances(player=player)}


def deposit_out(
    player: Player, deposit: Deposit, reference: str, balances: dict | None = None
) -> dict[str, Any]:
    """The deposit's answer; `balances` when the caller read them (a page of deposits reads its
    players' in one query)."""
    return {
        "player_id": player.external_id,
        "transfer_id": deposit.transfer_id,
        "reference": reference,
        "amount": _money(deposit.amount),
        "gst": _money(deposit.gst),
        "gst_rate": _money(deposit.gst_rate),
        "credited": _money(deposit.credited),
        "balances": selectors.wallet_balances(player=player) if balances is None else balances,
    }


def deposits_rendered(records: Sequence[GatewayDeposit]) -> dict[int, dict[str, Any]]:
    """Deposits as their POST answered them, balances as they are now: the data of the
    `deposit.credited` events (rummy_ledger.events)."""
    rows = selectors.deposits_by_pk([r.pk for r in records])
    balances = selectors.wallets_balances(players=[row.player for row in rows])
    return {
        row.pk: deposit_out(
            row.player, row.deposit, row.record.reference, balances.get(row.player.pk, {})
        )
        for row in rows
    }


def withdrawals_rendered(withdrawals: Sequence[Withdrawal]) -> dict[int, dict[str, Any]]:
    """Withdrawals as `GET /withdrawals/{id}` answers them, as the service just saved them: the
    data of the withdrawal events (rummy_ledger.events)."""
    return {w.pk: withdrawal_record_out(w) for w in withdrawals}


def kyc_out(player: Player, record: KycRecord) -> dict[str, Any]:
    return {
        "player_id": player.external_id,
        "kyc_status": player.kyc_status,
        "pan": player.pan,
        "reference": record.reference,
        "status": record.status,
    }


def withdrawal_out(withdrawal: Withdrawal) -> dict[str, Any]:
    return {
        **withdrawal_record_out(withdrawal),
        "balances": selectors.wallet_balances(player=withdrawal.player),
    }


def withdrawal_record_out(withdrawal: Withdrawal) -> dict[str, Any]:
    return {
        "withdrawal_id": withdrawal.pk,
        "reference": withdrawal.reference,
        "player_id": withdrawal.player.external_id,
        "status": withdrawal.status,
        "amount": _money(withdrawal.amount),
        "from_winnings": _money(withdrawal.amount.amount - withdrawal.from_deposit),
        "from_deposit": _money(withdrawal.from_deposit),
        "net_winnings": _money(withdrawal.net_winnings),
        "tds": _money(withdrawal.tds),
        "payout": _money(withdrawal.payout),
        "needs_approval": withdrawal.needs_approval,
        "gateway_reference": withdrawal.gateway_reference,
        "failure_reason": withdrawal.failure_reason,
    }


def tax_statement_out(player: Player, year: FinancialYear, position: TaxPosition) -> dict:
    end = position.year_end
    body = {
        "player_id": player.external_id,
        "fy": year.label,
        "start": year.start,
        "end": year.end,
        "opening": _money(position.opening),
        "deposits": _money(position.deposits),
        "withdrawals": _money(position.withdrawals),
        "withdrawal_count": position.withdrawal_count,
        "net_winnings": _money(position.taxed_net_winnings),
        "tds": _money(position.tds),
        "year_end": None
        if end is None
        else {
            "as_of": end.as_of,
            **{
                name: _money(getattr(end, name))
                for name in ("closing", "net_winnings", "tds", "withheld", "carry_forward")
            },
        },
    }
    return TaxStatementOut(body).data


def protection_out(player_id: str, state: Protection) -> dict:
    excluded = state.excluded_at(timezone.now())
    body = {
        "player_id": player_id,
        "daily_limit": _limit(state.daily_limit),
        "monthly_limit": _limit(state.monthly_limit),
        "pending": [
            {
                "limit": pending.kind.removesuffix("_limit"),
                "amount": _limit(pending.limit),
                "effective_at": pending.effective_at,
            }
            for pending in state.pending
        ],
        "self_excluded": excluded,
        "self_excluded_until": state.excluded_until
        if excluded and not state.excluded_permanently
        else None,
        "self_excluded_permanently": state.excluded_permanently,
    }
    return ProtectionOut(body).data


# The data of the money's events, as these endpoints answer (rummy_ledger.events): registered
# from WalletsConfig.ready().
EVENT_RENDERERS = [
    Renderer((EventType.DEPOSIT_CREDITED,), deposits_rendered),
    Renderer(WITHDRAWAL_EVENTS, withdrawals_rendered),
]
