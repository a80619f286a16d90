"""Money in from outside: payment-gateway deposits (GST-inclusive), practice chips.

A deposit is one transfer: gateway clearing -amount, the deposit bucket +credited, GST payable
+gst (`wallets.tax.gst_split`: 28/128 of the amount, the parts add up to it exactly). With the
GST cashback setting at "bonus", the GST amount is credited again as bonus (`bonus_grant`).
A deposit's reference is its natural key: the same reference with the same amount for the same
player is the same deposit, whenever it comes back (deposits stored before GST keep their
shape and are answered as they were); with anything else it is a conflict.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from djmoney.money import Money

from wallets import references, tax
from wallets.errors import IdempotencyConflict
from wallets.models import BonusLot, Bucket, PlatformAccount, Player, Transfer
from wallets.services.accounts import platform_accounts, player_accounts
from wallets.services.bonuses import bonus_grant
from wallets.services.ledger import Leg, Posted, transfer_post
from wallets.services.players import player_get_or_create, player_lock
from wallets.services.protection import deposit_allowed
from wallets.services.real_money import real_money_check, region_set

CASHBACK_OFF, CASHBACK_BONUS = "off", "bonus"


@dataclass(frozen=True)
class Deposit:
    transfer_id: int
    created: bool
    amount: Decimal
    gst: Decimal
    credited: Decimal


@transaction.atomic
def deposit_register(
    *,
    player_external_id: str,
    amount: Money,
    reference: str,
    region: str = "",
    changed_by: str = "",
) -> Deposit:
    """Credit a payment-gateway deposit, net of GST, once per reference (registers the player
    if new; records their region when given). The player's row is locked first: one player's
    money in and out run in turn, so the checks on the player's history (real money, self-
    exclusion, deposit limits) run between the lock and the posting, and concurrent deposits
    cannot together pass a limit. A deposit already made is answered as it was."""
    player = player_lock(external_id=player_external_id, create=True)
    key = references.join(Transfer.Kind.DEPOSIT, reference)
    stored = Transfer.objects.filter(idempotency_key=key).prefetch_related("entries").first()
    if stored is not None:
        return _as_stored(stored, player=player, amount=amount, reference=reference)
    if region:
        region_set(player=player, region=region, changed_by=changed_by)
    real_money_check(players=[player])
    deposit_allowed(player=player, amount=amount.amount)
    split = tax.gst_split(amount.amount)
    deposit = player_accounts(player=player)[Bucket.DEPOSIT]
    platform = platform_accounts()
    legs = [
        Leg(platform[PlatformAccount.GATEWAY_CLEARING].pk, -amount),
        Leg(deposit.pk, Money(split.credited, amount.currency)),
    ]
    if split.gst:  # a deposit of a few paise carries no GST
        legs.append(
            Leg(platform[PlatformAccount.GST_PAYABLE].pk, Money(split.gst, amount.currency))
        )
    posted = transfer_post(
        kind=Transfer.Kind.DEPOSIT,
        reference=reference,
        idempotency_key=key,
        legs=legs,
        memo=f"deposit {amount.amount} = {split.credited} credited + {split.gst} GST",
    )
    if posted.created and split.gst and settings.GST_CASHBACK == CASHBACK_BONUS:
        bonus_grant(
            player=player,
            amount=Money(split.gst, amount.currency),
            source=BonusLot.Source.CASHBACK,
            reference=reference,
            idempotency_key=references.join(key, "cashback"),
            memo=f"GST cashback on deposit {reference}",
        )
    return Deposit(posted.transfer_id, posted.created, split.amount, split.gst, split.credited)


def _as_stored(stored: Transfer, *, player: Player, amount: Money, reference: str) -> Deposit:
    """The deposit this reference already made, if it is the same one; else a conflict."""
    by_code = {e.account_id: e.amount.amount for e in stored.entries.all()}
    accounts = player_accounts(player=player)
    platform = platform_accounts()
    paid = -by_code.get(platform[PlatformAccount.GATEWAY_CLEARING].pk, Decimal(0))
    credited = by_code.get(accounts[Bucket.DEPOSIT].pk)
    if credited is None or paid != amount.amount:
        raise IdempotencyConflict(
            f"deposit reference {reference!r} was already used for another deposit",
            details={"reference": reference},
        )
    gst = by_code.get(platform[PlatformAccount.GST_PAYABLE].pk, Decimal("0.00"))
    return Deposit(stored.pk, False, paid, gst, credited)


@transaction.atomic
def chips_grant(*, player_external_id: str, amount: Money, reference: str) -> Posted:
    """Give a player practice chips from the chips issuance account (never convertible)."""
    player = player_get_or_create(external_id=player_external_id)
    chips = player_accounts(player=player)[Bucket.CHIPS]
    issuance = platform_accounts()[PlatformAccount.CHIPS_ISSUANCE]
    return transfer_post(
        kind=Transfer.Kind.CHIPS_GRANT,
        reference=reference,
        idempotency_key=references.join(Transfer.Kind.CHIPS_GRANT, reference),
        legs=[Leg(issuance.pk, -amount), Leg(chips.pk, amount)],
    )
