"""Promotional credit: the bonus bucket, funded by the promotions account.

Bonus is granted here only (today: the GST cashback on deposits), so whatever bonus credits
need later (an expiry, a cap) is added in one place.
"""

from djmoney.money import Money

from wallets.models import Bucket, PlatformAccount, Player, Transfer
from wallets.services.ledger import Leg, Posted, transfer_post
from wallets.services.players import platform_accounts, player_accounts


def bonus_grant(
    *, player: Player, amount: Money, reference: str, idempotency_key: str, memo: str = ""
) -> Posted:
    """Credit `amount` of bonus from promotions, once per idempotency key."""
    bonus = player_accounts(player=player)[Bucket.BONUS]
    promotions = platform_accounts()[PlatformAccount.PROMOTIONS]
    return transfer_post(
        kind=Transfer.Kind.BONUS,
        reference=reference,
        idempotency_key=idempotency_key,
        legs=[Leg(promotions.pk, -amount), Leg(bonus.pk, amount)],
        memo=memo,
    )
