from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from wallets.models import CASH
from wallets.money import MoneyError, parse_amount


@extend_schema_field(OpenApiTypes.STR)
class AmountField(serializers.Field):
    """A positive INR amount given as a decimal string; JSON floats are refused."""

    default_error_messages = {"positive": "The amount must be greater than zero."}

    def to_internal_value(self, data):
        try:
            money = parse_amount(data, CASH)
        except MoneyError as exc:
            raise serializers.ValidationError(str(exc)) from exc
        if money.amount <= 0:
            self.fail("positive")
        return money

    def to_representation(self, value):
        return f"{value.amount:.2f}"


class DepositIn(serializers.Serializer):
    amount = AmountField()
    reference = serializers.CharField(max_length=100)


class BalanceOut(serializers.Serializer):
    amount = serializers.CharField()
    currency = serializers.CharField()


class WalletOut(serializers.Serializer):
    player_id = serializers.CharField()
    balances = serializers.DictField(child=BalanceOut())


class DepositOut(WalletOut):
    transfer_id = serializers.IntegerField()
    reference = serializers.CharField()
    amount = serializers.CharField()
