from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from wallets import selectors, services
from wallets.api.auth import HasScope
from wallets.api.serializers import DepositIn, DepositOut, WalletOut


class WalletView(APIView):
    permission_classes = [HasScope]
    required_scopes = ("games", "payments")

    @extend_schema(responses=WalletOut, summary="A player's balances by bucket")
    def get(self, request, player_id: str):
        player = selectors.player_by_external_id(player_id)
        balances = selectors.wallet_balances(player=player)
        return Response({"player_id": player.external_id, "balances": balances})


class DepositView(APIView):
    permission_classes = [HasScope]
    required_scopes = ("payments",)

    @extend_schema(
        request=DepositIn,
        responses={201: DepositOut, 200: DepositOut},
        summary="Credit a payment-gateway deposit (idempotent by gateway reference)",
    )
    def post(self, request, player_id: str):
        data = DepositIn(data=request.data)
        data.is_valid(raise_exception=True)
        posted = services.deposit_register(
            player_external_id=player_id,
            amount=data.validated_data["amount"],
            reference=data.validated_data["reference"],
        )
        player = selectors.player_by_external_id(player_id)
        body = {
            "player_id": player.external_id,
            "transfer_id": posted.transfer_id,
            "reference": data.validated_data["reference"],
            "amount": f"{data.validated_data['amount'].amount:.2f}",
            "balances": selectors.wallet_balances(player=player),
        }
        return Response(body, status=status.HTTP_201_CREATED if posted.created else 200)
