"""Wallet endpoints: balances, deposits, KYC, withdrawals and their gateway results, what a
payments client reads back after a crash (its withdrawals, its deposits), the tax statement,
deposit limits and self-exclusion. Views translate: a serializer checks the shape, one service
decides (or a selector reads), a serializer module's function writes the answer."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.response import Response

from rummy_ledger.api.idempotency import IDEMPOTENCY_HEADER_OPTIONAL, idempotent
from rummy_ledger.api.paging import AFTER_PARAMETER, LIMIT_PARAMETER, page_answer, page_asked
from rummy_ledger.api.schema import error_codes
from rummy_ledger.api.views import ScopedView, valid_data
from rummy_ledger.db import snapshot
from wallets import selectors
from wallets.api import serializers as s
from wallets.errors import FinancialYearInvalid
from wallets.errors import WalletErrorCode as W
from wallets.services import kyc, protection, real_money, withdrawals
from wallets.services.deposits import deposit_register
from wallets.tax import formulas
from wallets.tax.tds import tax_position

# The refusals each operation's services can answer (beyond what any request can: see
# rummy_ledger.api.schema); a posting may also find its balance beyond what a column holds (422).
PLAYER_BUSY = W.LEDGER_BUSY  # the player's row lock, bounded (wallets.services.players)
UNKNOWN_PLAYER = {404: [W.UNKNOWN_PLAYER]}


def _created(created: bool) -> int:
    return status.HTTP_201_CREATED if created else status.HTTP_200_OK


class PaymentsView(ScopedView):  # the payment gateway's endpoints
    required_scopes = ("payments",)


class WalletView(ScopedView):
    required_scopes = ("games", "payments")

    @extend_schema(
        responses=s.WalletOut,
        summary="A player's balances by bucket",
        extensions=error_codes(UNKNOWN_PLAYER),
    )
    def get(self, request, player_id: str):
        return Response(s.wallet_out(selectors.player_by_external_id(player_id)))


def _blocked_region_kept(request, player_id: str) -> None:
    """A blocked region the gateway reports is recorded before, and whatever becomes of, the
    request that carries it (`real_money.region_report_kept`)."""
    region = request.data.get("region") if isinstance(request.data, dict) else None
    if isinstance(region, str):
        real_money.region_report_kept(
            player_external_id=player_id, region=region, changed_by=request.auth.name
        )


class DepositView(PaymentsView):
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
        data = valid_data(s.DepositIn, request)
        deposit = deposit_register(
            player_external_id=player_id,
            amount=data["amount"],
            reference=data["reference"],
            region=data.get("region", ""),
            changed_by=self.client.name,
            client=self.client,
        )
        player = selectors.player_by_external_id(player_id)
        body = s.deposit_out(player, deposit, data["reference"])
        return Response(body, status=_created(deposit.created))


class KycView(PaymentsView):
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
        record, created = kyc.kyc_report(
            player_external_id=player_id,
            changed_by=self.client.name,
            client=self.client,
            **valid_data(s.KycIn, request),
        )
        player = record.player
        player.refresh_from_db()
        return Response(s.kyc_out(player, record), status=_created(created))


class WithdrawalView(PaymentsView):
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
        withdrawal, created = withdrawals.withdrawal_request(
            player_external_id=player_id, client=self.client, **valid_data(s.WithdrawalIn, request)
        )
        return Response(s.withdrawal_out(withdrawal), status=_created(created))


class WithdrawalResultView(PaymentsView):
    """The gateway's result for a withdrawal: `serializer` checks it, `service` records it."""

    serializer: type[s.serializers.Serializer]
    service: staticmethod

    def post(self, request, withdrawal_id: int):
        return idempotent(request, lambda: self._result(request, withdrawal_id), required=False)

    def _result(self, request, withdrawal_id: int) -> Response:
        withdrawal, _ = self.service(
            client=self.client, withdrawal_id=withdrawal_id, **valid_data(self.serializer, request)
        )
        return Response(s.withdrawal_out(withdrawal))


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


class WithdrawalGetView(PaymentsView):
    @extend_schema(
        responses=s.WithdrawalRecordOut,
        parameters=[WITHDRAWAL_ID],
        summary="A withdrawal of this client, as its POST answers it without the balances",
        extensions=error_codes({404: [W.UNKNOWN_WITHDRAWAL]}),
    )
    def get(self, request, withdrawal_id: int):
        withdrawal = selectors.withdrawal_of(client=self.client, withdrawal_id=withdrawal_id)
        return Response(s.withdrawal_record_out(withdrawal))


BY_REFERENCE = [s.REFERENCE_PARAMETER, AFTER_PARAMETER, LIMIT_PARAMETER]


class WithdrawalsView(PaymentsView):
    @extend_schema(
        responses=s.WithdrawalsOut,
        parameters=BY_REFERENCE,
        summary="This client's withdrawals, oldest first, cursor-paged; by reference",
        operation_id="v1_withdrawals_list",
    )
    def get(self, request):
        asked = page_asked(s.ByReferenceQuery, request)
        rows = selectors.withdrawals_listed(
            client=self.client,
            reference=asked.filters.get("reference"),
            after_id=asked.after_id,
            count=asked.count,
        )
        return Response(page_answer("withdrawals", rows, asked, s.withdrawal_record_out))


class DepositsView(PaymentsView):
    @extend_schema(
        responses=s.DepositsOut,
        parameters=BY_REFERENCE,
        summary="This client's deposits, oldest first, cursor-paged; by reference",
        operation_id="v1_deposits_list",
    )
    def get(self, request):
        asked = page_asked(s.ByReferenceQuery, request)
        with snapshot():  # the deposits and their players' balances as of one moment
            rows = selectors.deposits_listed(
                client=self.client,
                reference=asked.filters.get("reference"),
                after_id=asked.after_id,
                count=asked.count,
            )
            balances = selectors.wallets_balances(players=[row.player for row in rows])
        return Response(
            page_answer(
                "deposits",
                rows,
                asked,
                lambda row: s.deposit_out(
                    row.player, row.deposit, row.record.reference, balances.get(row.player.pk, {})
                ),
            )
        )


# The financial years the statement answers for (`tax.FY_FIRST_YEARS`, else 400
# financial_year_invalid), in OpenAPI as an exact pattern: a schema-valid year is answered.
FY_LABELS = [f"{y}-{(y + 1) % 100:02}" for y in formulas.FY_FIRST_YEARS]
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


class TaxStatementView(PaymentsView):
    @extend_schema(
        responses=s.TaxStatementOut,
        parameters=[FY_PARAMETER],
        summary="A player's TDS position in a financial year",
        extensions=error_codes({**UNKNOWN_PLAYER, 400: [W.FINANCIAL_YEAR_INVALID]}),
    )
    def get(self, request, player_id: str, fy: str):
        player = selectors.player_by_external_id(player_id)
        try:
            year = formulas.financial_year(fy)
        except formulas.TaxError as exc:
            raise FinancialYearInvalid(str(exc), details={"fy": fy}) from exc
        position = tax_position(player=player, fy=year)
        return Response(s.tax_statement_out(player, year, position))


class LimitsView(PaymentsView):
    @extend_schema(
        responses=s.ProtectionOut,
        summary="A player's deposit limits and exclusion",
        extensions=error_codes(UNKNOWN_PLAYER),
    )
    def get(self, request, player_id: str):
        player = selectors.player_by_external_id(player_id)
        state = protection.protection_of(player=player)
        return Response(s.protection_out(player.external_id, state))

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
        data = valid_data(s.LimitsIn, request)
        state = protection.limits_set(
            player_external_id=player_id,
            daily_limit=data["daily"],
            monthly_limit=data["monthly"],
            changed_by=self.client.name,
        )
        return Response(s.protection_out(player_id, state))


class SelfExclusionView(PaymentsView):
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
        state = protection.self_exclusion_start(
            player_external_id=player_id,
            days=valid_data(s.SelfExclusionIn, request).get("days"),
            changed_by=self.client.name,
        )
        return Response(s.protection_out(player_id, state), status=status.HTTP_201_CREATED)
