"""Wallet services: players and their accounts, platform accounts, deposits, chips."""

from django.db import transaction
from djmoney.money import Money

from wallets.ledger import Leg, Posted, transfer_post
from wallets.models import (
    BUCKET_CURRENCY,
    PLATFORM_CURRENCY,
    Account,
    Bucket,
    PlatformAccount,
    Player,
    Transfer,
)


def player_get_or_create(*, external_id: str) -> Player:
    """The player with this platform id, registered with one account per bucket if new.

    Safe under concurrency: inserts that lose a race are ignored, then everything is re-read.
    """
    Player.objects.bulk_create([Player(external_id=external_id)], ignore_conflicts=True)
    player = Player.objects.get(external_id=external_id)
    Account.objects.bulk_create(
        [
            Account(
                kind=Account.Kind.PLAYER,
                code=f"player:{external_id}:{bucket}",
                player=player,
                bucket=bucket,
                balance=Money(0, currency),
            )
            for bucket, currency in BUCKET_CURRENCY.items()
        ],
        ignore_conflicts=True,
    )
    return player


def player_accounts(*, player: Player) -> dict[str, Account]:
    return {a.bucket: a for a in Account.objects.filter(player=player, kind=Account.Kind.PLAYER)}


def platform_accounts() -> dict[str, Account]:
    """Every platform account by code, created on first use (they are append-only sinks)."""
    Account.objects.bulk_create(
        [
            Account(kind=Account.Kind.PLATFORM, code=f"platform:{code}", balance=Money(0, currency))
            for code, currency in PLATFORM_CURRENCY.items()
        ],
        ignore_conflicts=True,
    )
    accounts = Account.objects.filter(kind=Account.Kind.PLATFORM)
    return {a.code.removeprefix("platform:"): a for a in accounts}


@transaction.atomic
def deposit_register(*, player_external_id: str, amount: Money, reference: str) -> Posted:
    """Credit a payment-gateway deposit to the player's deposit bucket, once per reference."""
    return _credit_from_platform(
        player_external_id=player_external_id,
        bucket=Bucket.DEPOSIT,
        source=PlatformAccount.GATEWAY_CLEARING,
        kind=Transfer.Kind.DEPOSIT,
        amount=amount,
        reference=reference,
    )


@transaction.atomic
def chips_grant(*, player_external_id: str, amount: Money, reference: str) -> Posted:
    """Give a player practice chips from the chips issuance account (never convertible)."""
    return _credit_from_platform(
        player_external_id=player_external_id,
        bucket=Bucket.CHIPS,
        source=PlatformAccount.CHIPS_ISSUANCE,
        kind=Transfer.Kind.CHIPS_GRANT,
        amount=amount,
        reference=reference,
    )


def _credit_from_platform(
    *, player_external_id: str, bucket: str, source: str, kind: str, amount: Money, reference: str
) -> Posted:
    """Register the player if new and move `amount` from a platform account into a bucket."""
    player = player_get_or_create(external_id=player_external_id)
    target = player_accounts(player=player)[bucket]
    platform = platform_accounts()[source]
    return transfer_post(
        kind=kind,
        reference=reference,
        idempotency_key=f"{kind}:{reference}",
        legs=[Leg(platform.pk, -amount), Leg(target.pk, amount)],
    )
