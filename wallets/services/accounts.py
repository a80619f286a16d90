"""The accounts money moves between: a player's (one per bucket) and the platform's. Apart from
players.py, so the services that post to them (bonuses, tax, withdrawals) import no cycle."""

from djmoney.money import Money

from wallets import references
from wallets.models import PLATFORM_CURRENCY, Account, Player


def player_accounts(*, player: Player) -> dict[str, Account]:
    return {a.bucket: a for a in Account.objects.filter(player=player, kind=Account.Kind.PLAYER)}


def platform_accounts() -> dict[str, Account]:
    """Every platform account by code, created on first use (they are append-only sinks)."""
    Account.objects.bulk_create(
        [
            Account(
                kind=Account.Kind.PLATFORM,
                code=references.platform_account_code(code),
                balance=Money(0, currency),
            )
            for code, currency in PLATFORM_CURRENCY.items()
        ],
        ignore_conflicts=True,
    )
    accounts = Account.objects.filter(kind=Account.Kind.PLATFORM)
    return {references.parse_account_code(a.code).name: a for a in accounts}
