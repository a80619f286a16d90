"""Adjustments: finance credits or debits a player's bucket, proposed by one member of staff and
posted only when another approves it (a proposal kind: `wallets.services.proposals`)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from djmoney.money import Money

from wallets import references
from wallets.errors import InsufficientFunds, ProposalInvalid
from wallets.models import (
    BUCKET_CURRENCY,
    Account,
    Adjustment,
    Bucket,
    PlatformAccount,
    Player,
    Transfer,
)
from wallets.money.formatting import money
from wallets.money.parsing import money_checked
from wallets.services.accounts import platform_accounts
from wallets.services.proposals import permission_required, reason_required
from wallets.services.transfers import Leg, TransferRequest, transfers_post


def adjustment_checked(*, player: Player, bucket: str, direction: str, amount: Money) -> Money:
    """The amount in the bucket's currency, or `ProposalInvalid` saying why no approver could
    ever approve it: a debit of more than the bucket holds now is refused at once (approval
    checks again, against the balance then)."""
    currency = BUCKET_CURRENCY.get(bucket)
    if currency is None:
        raise ProposalInvalid(f"unknown bucket {bucket!r}")
    if bucket == Bucket.PENDING:
        raise ProposalInvalid("pending withdrawals move only with their withdrawal")
    if bucket == Bucket.BONUS:
        raise ProposalInvalid("bonus is credited by a bonus grant (it expires), not adjusted")
    if direction not in Adjustment.Direction.values:
        raise ProposalInvalid(f"direction must be credit or debit, not {direction!r}")
    amount = money_checked(Money(amount.amount, currency))
    if amount.amount <= 0:
        raise ProposalInvalid("an adjustment moves a positive amount; choose credit or debit")
    if direction == Adjustment.Direction.DEBIT:
        account = Account.objects.get(player=player, bucket=bucket, kind=Account.Kind.PLAYER)
        if amount > account.balance:
            raise ProposalInvalid(
                f"refused: debiting {money(amount)} would take {account.code} below zero "
                f"(it holds {money(account.balance)})",
                details={"accounts": [account.code]},
            )
    return amount


def adjustment_propose(
    *,
    proposed_by: AbstractBaseUser,
    player: Player,
    bucket: str,
    direction: str,
    amount: Money,
    reason: str,
) -> Adjustment:
    permission_required(proposed_by, "wallets.add_adjustment")
    amount = adjustment_checked(player=player, bucket=bucket, direction=direction, amount=amount)
    return Adjustment.objects.create(
        player=player,
        bucket=bucket,
        direction=direction,
        amount=amount,
        reason=reason_required(reason, "an adjustment"),
        proposed_by=proposed_by,
    )


def adjustment_post(adj: Adjustment) -> None:
    """Post the adjustment against the `adjustments` platform account (chips: chips issuance)."""
    account = Account.objects.get(
        player_id=adj.player_id, bucket=adj.bucket, kind=Account.Kind.PLAYER
    )
    sink = platform_accounts()[PlatformAccount.ADJUSTMENTS]
    if str(adj.amount.currency) != str(sink.balance.currency):
        sink = platform_accounts()[PlatformAccount.CHIPS_ISSUANCE]  # chips are never cash
    signed = adj.amount if adj.direction == Adjustment.Direction.CREDIT else -adj.amount
    key = references.join("adjustment", adj.pk)
    request = TransferRequest(
        kind=Transfer.Kind.ADJUSTMENT,
        reference=key,
        idempotency_key=key,
        legs=[Leg(account.pk, signed), Leg(sink.pk, -signed)],
        memo=adj.reason[:255],
    )
    try:
        posted = transfers_post(requests=[request])[0]
    except InsufficientFunds as exc:
        raise InsufficientFunds(
            f"refused: debiting {money(adj.amount)} would take {account.code} below zero "
            f"(it holds {money(account.balance)})",
            details={"accounts": [account.code]},
        ) from exc
    adj.transfer_id = posted.transfer_id
    adj.save(update_fields=["transfer"])
