"""Wallet endpoints: balances, deposits, KYC, withdrawals and their gateway results, the tax
statement, deposit limits and self-exclusion. Views translate: a serializer checks the shape,
one service decides."""

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from rummy_ledger.api.auth import HasScope
from rummy_ledger.api.idempotency import IDEMPOTENCY_HEADER_OPTIONAL, idempotent
from rummy_ledger.api.schema import error_codes
from wallets import selectors, tax
from wallets.amounts import amount_text
from wallets.api import serializers as s
from wallets.errors import FinancialYearInvalid
from wallets.errors import WalletErrorCode as W
from wallets.models import Withdrawal
from wallets.services import kyc, protection, real_money, withdrawals
from wallets.services.deposits import deposit_register
from wallets.services.tax import tax_position

# The refusals each operation's services can answer (beyond what any request can: see
# rummy_ledger.api.schema); a posting may also find its balance beyond what a column holds (422).
PLAYER_BUSY = W.LEDGER_BUSY  # the player's row lock, bounded (wallets.services.players)
UNKNOWN_PLAYER = {404: [W.UNKNOWN_PLAYER]}


def _money(value) -> str:
    return amount_text(getattr(value, "amount", value))


def _created(created: bool) -> int:
    return status.HTTP_201_CREATED if created else status.HTTP_200_OK


class WalletView(APIView):
    permission_classes = [HasScope]
    required_scopes = ("games", "payments")

    @extend_schema(
        responses=s.WalletOut,
        summary="A player's balances by bucket",
        extensions=error_codes(UNKNOWN_PLAYER),
    )
    def get(self, request, player_id: str):
        player = selectors.player_by_external_id(player_id)
        balances = selectors.wallet_balances(player=player)
        return Response({"player_id": player.external_id, "balances": balances})


def _blocked_region_kept(request, player_id: str) -> None:
    """A blocked region the gateway reports is recorded before, and whatever becomes of, the
    request that carries it (`real_money.region_report_kept`)."""
    region = request.data.get("region") if isinstance(request.data, dict) else None
    if isinstance(region, str):
        real_money.region_report_kept(
            player_external_id=player_id, region=region, changed_by=request.auth.name
        )


class DepositView(APIView):
    permission_classes = [HasScope]
    required_scopes = ("payments",)

    @extend_schema(
        request=s.DepositIn,
        responses={201: s.DepositOut, 200: s.DepositOut},
        parameters=[IDEMPOTENCY_HEADER_OPTIONAL],
        summary="Credit a payment-gateway deposit, net of GST at the rate in force (idempotent "
        "by reference)",
        extensions=error_codes(
            {
                400: [W.REGION_INVALID, W.DEPOSIT_BELOW_MINIMUM],
                409: [
                    W.DEPOSIT_LIMIT,
                    W.SELF_EXCLUDED,
                    W.REAL_MONEY_UNAVAILABLE,
                    W.REFERENCE_CONFLICT,
                    PLAYER_BUSY,
                ],
                422: [W.BALANCE_OUT_OF_RANGE],
            }
        ),
    )
    def post(self, request, player_id: str):
        _blocked_region_kept(request, player_id)
        return idempotent(request, lambda: self._deposit(request, player_id), required=False)

    def _deposit(self, request, player_id: str) -> Response:
        data = s.DepositIn(data=request.data)
        data.is_valid(raise_exception=True)
        deposit = deposit_register(
            player_external_id=player_id,
            amount=data.validated_data["amount"],
            reference=data.validated_data["reference"],
            region=data.validated_data.get("region", ""),
            changed_by=request.auth.name,
            client=request.auth,
        )
        player = selectors.player_by_external_id(player_id)
        body = {
            "player_id": player.external_id,
            "transfer_id": deposit.transfer_id,
            "reference": data.validated_data["reference"],
            "amount": _money(deposit.amount),
            "gst": _money(deposit.gst),
            "gst_rate": _money(deposit.gst_rate),
            "credited": _money(deposit.credited),
            "balances": selectors.wallet_balances(player=player),
        }
        return Response(body, status=_created(deposit.created))


class KycView(APIView):
    permission_classes = [HasScope]
    required_scopes = ("payments",)

    @extend_schema(
        request=s.KycIn,
        responses={201: s.KycOut, 200: s.KycOut},
        parameters=[IDEMPOTENCY_HEADER_OPTIONAL],
        summary="Record a KYC result: a PAN, verified or rejected (idempotent by reference)",
        extensions=error_codes(
            {
                400: [W.PAN_INVALID, W.REGION_INVALID],
                409: [W.PAN_CONFLICT, W.REFERENCE_CONFLICT, PLAYER_BUSY],
            }
        ),
    )
    def post(self, request, player_id: str):
        _blocked_region_kept(request, player_id)
        return idempotent(request, lambda: self._kyc(request, player_id), required=False)

    def _kyc(self, request, player_id: str) -> Response:
        data = s.KycIn(data=request.data)
        data.is_valid(raise_exception=True)
        record, created = kyc.kyc_report(
            player_external_id=player_id,
            changed_by=request.auth.name,
            client=request.auth,
            **data.validated_data,
        )
        player = record.player
        player.refresh_from_db()
        body = {
            "player_id": player.external_id,
            "kyc_status": player.kyc_status,
            "pan": player.pan,
            "reference": record.reference,
            "status": record.status,
        }
        return Response(body, status=_created(created))


def _withdrawal_body(withdrawal: Withdrawal) -> dict:
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
        "balances": selectors.wallet_balances(player=withdrawal.player),
    }


class WithdrawalView(APIView):
    permission_classes = [HasScope]
    required_scopes = ("payments",)

    @extend_schema(
        request=s.WithdrawalIn,
        responses={201: s.WithdrawalOut, 200: s.WithdrawalOut},
        parameters=[IDEMPOTENCY_HEADER_OPTIONAL],
        summary="Withdraw from winnings (then deposits when real money is off for the player), "
        "TDS withheld (Rule 133); large or first ones wait for finance (idempotent by reference)",
        extensions=error_codes(
            {
                **UNKNOWN_PLAYER,
                409: [W.INSUFFICIENT_FUNDS, W.KYC_REQUIRED, W.REFERENCE_CONFLICT, PLAYER_BUSY],
                422: [W.BALANCE_OUT_OF_RANGE],
            }
        ),
    )
    def post(self, request, player_id: str):
        return idempotent(request, lambda: self._withdraw(request, player_id), required=False)

    def _withdraw(self, request, player_id: str) -> Response:
        data = s.WithdrawalIn(data=request.data)
        data.is_valid(raise_exception=True)
        withdrawal, created = withdrawals.withdrawal_request(
            player_external_id=player_id, client=request.auth, **data.validated_data
        )
        return Response(_withdrawal_body(withdrawal), status=_created(created))


class WithdrawalResultView(APIView):
    """The gateway's result for a withdrawal: `serializer` checks it, `service` records it."""

    permission_classes = [HasScope]
    required_scopes = ("payments",)
    serializer: type[s.serializers.Serializer]
    service: staticmethod

    def post(self, request, withdrawal_id: int):
        return idempotent(request, lambda: self._result(request, withdrawal_id), required=False)

    def _result(self, request, withdrawal_id: int) -> Response:
        data = self.serializer(data=request.data)
        data.is_valid(raise_exception=True)
        withdrawal, _ = self.service(
            client=request.auth, withdrawal_id=withdrawal_id, **data.validated_data
        )
        return Response(_withdrawal_body(withdrawal))


WITHDRAWAL_ID = OpenApiParameter(
    "withdrawal_id",
    int,
    OpenApiParameter.PATH,
    description="The `withdrawal_id` of the withdrawal's answer (this client's withdrawals only).",
)
GATEWAY_RESULT = {
    404: [W.UNKNOWN_WITHDRAWAL],
    409: [W.WITHDRAWAL_STATE, W.REFERENCE_CONFLICT, PLAYER_BUSY],
    422: [W.BALANCE_OUT_OF_RANGE],
}


@extend_schema(
    request=s.WithdrawalPaidIn,
    responses=s.WithdrawalOut,
    parameters=[IDEMPOTENCY_HEADER_OPTIONAL, WITHDRAWAL_ID],
    summary="The gateway paid an approved withdrawal (idempotent: the same reference again is 200)",
    extensions=error_codes(GATEWAY_RESULT),
)
class WithdrawalPaidView(WithdrawalResultView):
    serializer = s.WithdrawalPaidIn
    service = staticmethod(withdrawals.withdrawal_paid)


@extend_schema(
    request=s.WithdrawalFailedIn,
    responses=s.WithdrawalOut,
    parameters=[IDEMPOTENCY_HEADER_OPTIONAL, WITHDRAWAL_ID],
    summary="The gateway could not pay: the whole amount returns to winnings, TDS reversed "
    "(idempotent)",
    extensions=error_codes(GATEWAY_RESULT),
)
class WithdrawalFailedView(WithdrawalResultView):
    serializer = s.WithdrawalFailedIn
    service = staticmethod(withdrawals.withdrawal_failed)


# The financial years the statement answers for (`tax.FY_FIRST_YEARS`, else 400
# financial_year_invalid), in OpenAPI as an exact pattern: a schema-valid year is answered.
FY_LABELS = [f"{y}-{(y + 1) % 100:02}" for y in tax.FY_FIRST_YEARS]
FY_PARAMETER = OpenApiParameter(
    "fy",
    {
        "type": "string",
        "pattern": f"^(?!.*\\n)(?:{'|'.join(FY_LABELS)})$",
        "example": "2026-27",
    },
    OpenApiParameter.PATH,
    description="A financial year (1 April to 31 March), written `2026-27`: from 2000-01 to "
    "2098-99.",
)


class TaxStatementView(APIView):
    permission_classes = [HasScope]
    required_scopes = ("payments",)

    @extend_schema(
        responses=s.TaxStatementOut,
        parameters=[FY_PARAMETER],
        summary="A player's TDS position in a financial year",
        extensions=error_codes({**UNKNOWN_PLAYER, 400: [W.FINANCIAL_YEAR_INVALID]}),
    )
    def get(self, request, player_id: str, fy: str):
        player = selectors.player_by_external_id(player_id)
        try:
            year = tax.financial_year(fy)
        except tax.TaxError as exc:
            raise FinancialYearInvalid(str(exc), details={"fy": fy}) from exc
        position = tax_position(player=player, fy=year)
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
        return Response(s.TaxStatementOut(body).data)


def _protection_body(player_id: str, state: protection.Protection) -> dict:
    now = timezone.now()
    excluded = state.excluded_at(now)
    return {
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


def _limit(value) -> str | None:
    return None if value is None else _money(value)


class LimitsView(APIView):
    permission_classes = [HasScope]
    required_scopes = ("payments",)

    @extend_schema(
        responses=s.ProtectionOut,
        summary="A player's deposit limits and exclusion",
        extensions=error_codes(UNKNOWN_PLAYER),
    )
    def get(self, request, player_id: str):
        player = selectors.player_by_external_id(player_id)
        state = protection.protection_of(player=player)
        return Response(s.ProtectionOut(_protection_body(player.external_id, state)).data)

    @extend_schema(
        request=s.LimitsIn,
        responses=s.ProtectionOut,
        parameters=[IDEMPOTENCY_HEADER_OPTIONAL],
        summary="Set the daily and monthly deposit limits: lower at once, higher after a delay",
        extensions=error_codes({**UNKNOWN_PLAYER, 409: [PLAYER_BUSY]}),
    )
    def put(self, request, player_id: str):
        return idempotent(request, lambda: self._put(request, player_id), required=False)

    def _put(self, request, player_id: str) -> Response:
        data = s.LimitsIn(data=request.data)
        data.is_valid(raise_exception=True)
        state = protection.limits_set(
            player_external_id=player_id,
            daily_limit=data.validated_data["daily"],
            monthly_limit=data.validated_data["monthly"],
            changed_by=request.auth.name,
        )
        return Response(s.ProtectionOut(_protection_body(player_id, state)).data)


class SelfExclusionView(APIView):
    permission_classes = [HasScope]
    required_scopes = ("payments",)

    @extend_schema(
        request=s.SelfExclusionIn,
        responses={201: s.ProtectionOut},
        parameters=[IDEMPOTENCY_HEADER_OPTIONAL],
        summary="Self-exclusion for N days or for good: no cash games, no deposits; never "
        "lifted early",
        extensions=error_codes({**UNKNOWN_PLAYER, 409: [PLAYER_BUSY]}),
    )
    def post(self, request, player_id: str):
        return idempotent(request, lambda: self._post(request, player_id), required=False)

    def _post(self, request, player_id: str) -> Response:
        data = s.SelfExclusionIn(data=request.data)
        data.is_valid(raise_exception=True)
        state = protection.self_exclusion_start(
            player_external_id=player_id,
            days=data.validated_data.get("days"),
            changed_by=request.auth.name,
        )
        body = s.ProtectionOut(_protection_body(player_id, state)).data
        return Response(body, status=status.HTTP_201_CREATED)
