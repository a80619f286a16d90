"""Promotional credit: the bonus bucket, funded by the promotions account, held as lots.

Every credit is a lot (`BonusLot`) that expires `BONUS_EXPIRY_DAYS` after it was granted (at
once when real money is off for its player: bonus is never paid out): a
sign-up bonus, the GST cashback on a deposit, a finance grant (maker-checker). Entries spend the
lot that expires first and record what they took (`BonusSpend`, by the spender's reference);
a refund puts it back into those same lots, so it keeps its original expiry. The beat job
returns what expired lots still hold to promotions. The bonus bucket's balance is always the
sum of its lots' remaining (a reconciliation check). Bonus is never withdrawable (withdrawals
take winnings, and deposits once real money is off) and never a deposit for TDS (the tax
counts the deposit bucket only).

Lock order: lots (by id) before the ledger locks accounts, everywhere: entries and refunds
take the lots first, then post; the expiry locks one lot, then posts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone
from djmoney.money import Money

from wallets import references
from wallets.errors import InsufficientFunds, ProposalInvalid
from wallets.models import (
    BUCKET_CURRENCY,
    CASH,
    BonusGrant,
    BonusLot,
    BonusSpend,
    Bucket,
    PlatformAccount,
    Player,
    Transfer,
)
from wallets.money.parsing import money_checked
from wallets.services.accounts import platform_accounts, player_accounts
from wallets.services.proposals import permission_required, reason_required
from wallets.services.real_money import without_real_money
from wallets.services.transfers import ZERO, Leg, Posted, transfer_post


@transaction.atomic
def bonus_grant(
    *,
    player: Player,
    amount: Money,
    source: str,
    reference: str,
    idempotency_key: str,
    memo: str = "",
) -> Posted:
    """Credit `amount` of bonus from promotions as a new lot, once per idempotency key."""
    bonus = player_accounts(player=player)[Bucket.BONUS]
    promotions = platform_accounts()[PlatformAccount.PROMOTIONS]
    posted = transfer_post(
        kind=Transfer.Kind.BONUS,
        reference=reference,
        idempotency_key=idempotency_key,
        legs=[Leg(promotions.pk, -amount), Leg(bonus.pk, amount)],
        memo=memo,
    )
    if posted.created:
        _lot_create(player_id=player.pk, amount=amount.amount, source=source, posted=posted)
    return posted


def _lot_create(*, player_id: int, amount: Decimal, source: str, posted: Posted) -> BonusLot:
    return BonusLot.objects.create(
        player_id=player_id,
        source=source,
        amount=amount,
        remaining=amount,
        expires_at=timezone.now() + timedelta(days=settings.BONUS_EXPIRY_DAYS),
        transfer_id=posted.transfer_id,
    )


def bonus_signup(*, player: Player) -> None:
    """The sign-up bonus (`SIGNUP_BONUS`, 0: none), once per player whoever asks twice. Only
    a player's first deposit grants it (`deposit_register`), so only a player who may have real
    money and is not self-excluded (both checked before a deposit is taken) ever gets it."""
    if settings.SIGNUP_BONUS <= 0:
        return
    key = references.join("signup-bonus", player.external_id)
    bonus_grant(
        player=player,
        amount=Money(settings.SIGNUP_BONUS, CASH),
        source=BonusLot.Source.SIGNUP,
        reference=key,
        idempotency_key=key,
        memo="sign-up bonus",
    )


# --- spending and restoring -----------------------------------------------------------------


def bonus_lots_locked(*, player_ids: Iterable[int]) -> dict[int, list[BonusLot]]:
    """Each player's lots not yet expired that hold bonus, the one that expires first first,
    locked until the transaction ends, so the spend that follows finds them unchanged."""
    locked = (
        BonusLot.objects.filter(
            player_id__in=list(player_ids), remaining__gt=0, expires_at__gt=timezone.now()
        )
        .order_by("pk")
        .select_for_update()
    )
    lots: dict[int, list[BonusLot]] = defaultdict(list)
    for lot in sorted(locked, key=lambda lot: (lot.expires_at, lot.pk)):
        lots[lot.player_id].append(lot)
    return dict(lots)


def bonus_spend(
    *, lots: dict[int, list[BonusLot]], player_id: int, amount: Decimal, reference: str
) -> None:
    """Take `amount` from the player's `lots` (from `bonus_lots_locked`), the one that expires
    first first, and record what came from each under `reference` (the caller posts the ledger
    transfer)."""
    taken, left = _drain(lots.get(player_id, []), amount)
    if left > 0:
        raise InsufficientFunds(
            f"the bonus lots hold {amount - left} of the {amount} to spend",
            details={"accounts": [references.player_account_code(_external(player_id), "bonus")]},
        )
    BonusSpend.objects.bulk_create(
        BonusSpend(lot=lot, reference=reference, amount=take, restored=ZERO) for lot, take in taken
    )


def _drain(
    lots: Iterable[BonusLot], amount: Decimal
) -> tuple[list[tuple[BonusLot, Decimal]], Decimal]:
    """Take `amount` from `lots` in their order: what came from each, and what they lacked."""
    taken = []
    left = amount
    for lot in lots:
        if left <= 0:
            break
        take = min(lot.remaining, left)
        lot.remaining -= take
        lot.save(update_fields=["remaining"])
        taken.append((lot, take))
        left -= take
    return taken, left


def _external(player_id: int) -> str:
    return Player.objects.values_list("external_id", flat=True).get(pk=player_id)


@dataclass(frozen=True)
class BonusReturn:
    """Bonus a refund gives back to what `reference` spent."""

    reference: str
    amount: Decimal


def bonus_restore(*, returns: Sequence[BonusReturn]) -> None:
    """Put refunded bonus back into the lots it came from (the last spent first), keeping their
    expiry: a lot that has expired meanwhile goes back to promotions at the next sweep."""
    wanted = {r.reference: r.amount for r in returns if r.amount > 0}
    if not wanted:
        return
    spends = BonusSpend.objects.filter(reference__in=wanted, restored__lt=F("amount"))
    back: dict[int, Decimal] = defaultdict(lambda: ZERO)
    for spend in spends.order_by("-pk"):
        give = min(spend.amount - spend.restored, wanted[spend.reference])
        if give > 0:
            wanted[spend.reference] -= give
            back[spend.lot_id] += give
            BonusSpend.objects.filter(pk=spend.pk).update(restored=F("restored") + give)
    if any(left > 0 for left in wanted.values()):
        raise AssertionError(f"a bonus refund exceeds what was spent: {wanted}")
    for lot_id in sorted(back):  # lot order, like every other lot lock
        BonusLot.objects.filter(pk=lot_id).update(remaining=F("remaining") + back[lot_id])


# --- expiry ---------------------------------------------------------------------------------


def bonus_expire(*, now: datetime | None = None, limit: int = 1000) -> int:
    """Return what expired lots still hold to promotions; how many lots were emptied. A lot of
    a player real money is off for expires at once (bonus is never paid out). Each lot is its
    own transaction; a lot someone holds (an entry spending it) waits for the next run."""
    now = now or timezone.now()
    expired = BonusLot.objects.filter(_due(now), remaining__gt=0)
    ids = list(expired.order_by("expires_at", "pk").values_list("pk", flat=True)[:limit])
    return sum(_lot_expire(lot_id=pk, now=now) for pk in ids)


def _due(now: datetime) -> Q:
    due = Q(expires_at__lte=now)
    off = without_real_money()
    return due if off is None else due | Q(player__in=Player.objects.filter(off))


@transaction.atomic
def _lot_expire(*, lot_id: int, now: datetime) -> bool:
    lot = (
        BonusLot.objects.select_for_update(skip_locked=True)
        .filter(_due(now), pk=lot_id, remaining__gt=0)
        .select_related("player")
        .first()
    )
    if lot is None:
        return False
    reference = references.join("bonus-lot", lot.pk)
    expiries = Transfer.objects.filter(reference=reference, kind=Transfer.Kind.BONUS_EXPIRY)
    amount = Money(lot.remaining, CASH)
    transfer_post(
        kind=Transfer.Kind.BONUS_EXPIRY,
        reference=reference,
        idempotency_key=references.join(reference, "expiry", expiries.count() + 1),
        legs=[
            Leg(player_accounts(player=lot.player)[Bucket.BONUS].pk, -amount),
            Leg(platform_accounts()[PlatformAccount.PROMOTIONS].pk, amount),
        ],
        memo=f"bonus granted {lot.granted_at:%Y-%m-%d} expired "
        + (f"{lot.expires_at:%Y-%m-%d}" if lot.expires_at <= now else "now: real money is off"),
    )
    lot.remaining = ZERO
    lot.save(update_fields=["remaining"])
    return True


# --- reversals ------------------------------------------------------------------------------


def bonus_follow_reversal(*, bonus_moves: dict[int, Decimal], posted: Sequence[Posted]) -> None:
    """Keep the lots equal to the bonus bucket after an approved reversal (`bonus_moves`: the
    net move of each player's bonus bucket): bonus it gives back is a new lot with a fresh
    expiry; bonus it takes away comes out of the lots, the one that expires first first."""
    for player_id, moved in sorted(bonus_moves.items()):
        if moved > 0:
            _lot_create(
                player_id=player_id,
                amount=moved,
                source=BonusLot.Source.REVERSAL,
                posted=posted[0],
            )
        elif moved < 0:
            _lots_take(player_id=player_id, amount=-moved)


def _lots_take(*, player_id: int, amount: Decimal) -> None:
    lots = BonusLot.objects.filter(player_id=player_id, remaining__gt=0)
    _drain(lots.order_by("expires_at", "pk").select_for_update(), amount)


# --- grants by finance staff (a proposal kind: `wallets.services.proposals`) --------------------


def bonus_grant_propose(
    *, proposed_by: AbstractBaseUser, player: Player, amount: Money, reason: str
) -> BonusGrant:
    permission_required(proposed_by, "wallets.add_bonusgrant")
    amount = money_checked(Money(amount.amount, BUCKET_CURRENCY[Bucket.BONUS]))
    if amount.amount <= 0:
        raise ProposalInvalid("a bonus grant credits a positive amount")
    return BonusGrant.objects.create(
        player=player,
        amount=amount,
        reason=reason_required(reason, "a bonus grant"),
        proposed_by=proposed_by,
    )


def bonus_grant_post(grant: BonusGrant) -> None:
    key = references.join("bonus-grant", grant.pk)
    posted = bonus_grant(
        player=grant.player,
        amount=grant.amount,
        source=BonusLot.Source.GRANT,
        reference=key,
        idempotency_key=key,
        memo=grant.reason[:255],
    )
    grant.transfer_id = posted.transfer_id
    grant.save(update_fields=["transfer"])
