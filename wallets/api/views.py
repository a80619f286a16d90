"""Wallet endpoints: balances, deposits, KYC, withdrawals and their gateway results, the tax
statement, deposit limits and self-exclusion. Views translate: a serializer checks the shape,
one service decides."""

from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from rummy_ledger.api.auth import HasScope
from rummy_ledger.api.idempotency import (
    IDEMPOTENCY_HEADER,
    IDEMPOTENCY_HEADER_OPTIONAL,
    idempotent,
)
from wallets import selectors, tax
from wallets.amounts import amount_text
from wallets.api import serializers as s
from wallets.errors import FinancialYearInvalid
from wallets.models import Withdrawal
from wallets.services import kyc, protection, withdrawals
from wallets.services.deposits import deposit_register
from wallets.services.tax import tax_position


def _money(value) -> str:
    return amount_text(getattr(value, "amount", value))


def _created(created: bool) -> int:
    return status.HTTP_201_CREATED if created else status.HTTP_200_OK


class WalletView(APIView):
    permission_classes = [HasScope]
    required_scopes = ("games", "payments")

    @extend_schema(responses=s.WalletOut, summary="A player's balances by bucket")
    def get(self, request, player_id: str):
        player = selectors.player_by_external_id(player_id)
        balances = selectors.wallet_balances(player=player)
        return Response({"player_id": player.external_id, "balances": balances})


class DepositView(APIView):
    permission_classes = [HasScope]
    required_scopes = ("payments",)

    @extend_schema(
        request=s.DepositIn,
        responses={201: s.DepositOut, 200: s.DepositOut},
        parameters=[IDEMPOTENCY_HEADER_OPTIONAL],
        summary="Credit a payment-gateway deposit, net of 28 % GST (idempotent by reference); "
        "409 deposit_limit, self_excluded or real_money_unavailable when refused",
    )
    def post(self, request, player_id: str):
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
        )
        player = selectors.player_by_external_id(player_id)
        body = {
            "player_id": player.external_id,
            "transfer_id": deposit.transfer_id,
            "reference": data.validated_data["reference"],
            "amount": _money(deposit.amount),
            "gst": _money(deposit.gst),
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
    )
    def post(self, request, player_id: str):
        return idempotent(request, lambda: self._kyc(request, player_id), required=False)

    def _kyc(self, request, player_id: str) -> Response:
        data = s.KycIn(data=request.data)
        data.is_valid(raise_exception=True)
        record, created = kyc.kyc_report(
            player_external_id=player_id, changed_by=request.auth.name, **data.validated_data
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
        parameters=[IDEMPOTENCY_HEADER],
        summary="Withdraw from winnings, TDS withheld (Rule 133); large or first ones wait for "
        "finance",
    )
    def post(self, request, player_id: str):
        return idempotent(request, lambda: self._withdraw(request, player_id))

    def _withdraw(self, request, player_id: str) -> Response:
        data = s.WithdrawalIn(data=request.data)
        data.is_valid(raise_exception=True)
        withdrawal, created = withdrawals.withdrawal_request(
            player_external_id=player_id, **data.validated_data
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
        withdrawal, _ = self.service(withdrawal_id=withdrawal_id, **data.validated_data)
        return Response(_withdrawal_body(withdrawal))


@extend_schema(
    request=s.WithdrawalPaidIn,
    responses=s.WithdrawalOut,
    parameters=[IDEMPOTENCY_HEADER_OPTIONAL],
    summary="The gateway paid an approved withdrawal (idempotent)",
)
class WithdrawalPaidView(WithdrawalResultView):
    serializer = s.WithdrawalPaidIn
    service = staticmethod(withdrawals.withdrawal_paid)


@extend_schema(
    request=s.WithdrawalFailedIn,
    responses=s.WithdrawalOut,
    parameters=[IDEMPOTENCY_HEADER_OPTIONAL],
    summary="The gateway could not pay: the whole amount returns to winnings, TDS reversed",
)
class WithdrawalFailedView(WithdrawalResultView):
    serializer = s.WithdrawalFailedIn
    service = staticmethod(withdrawals.withdrawal_failed)


class TaxStatementView(APIView):
    permission_classes = [HasScope]
    required_scopes = ("payments",)

    @extend_schema(
        responses=s.TaxStatementOut, summary="A player's TDS position in a financial year"
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

    @extend_schema(responses=s.ProtectionOut, summary="A player's deposit limits and exclusion")
    def get(self, request, player_id: str):
        player = selectors.player_by_external_id(player_id)
        state = protection.protection_of(player=player)
        return Response(s.ProtectionOut(_protection_body(player.external_id, state)).data)

    @extend_schema(
        request=s.LimitsIn,
        responses=s.ProtectionOut,
        parameters=[IDEMPOTENCY_HEADER_OPTIONAL],
        summary="Set the daily and monthly deposit limits: lower at once, higher after a delay",
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
