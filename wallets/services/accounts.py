"""The accounts money moves between: a player's (one per bucket) and the platform's. Apart from
players.py, so the services that post to them (bonuses, tax, withdrawals) import no cycle."""

from djmoney.money import Money

from wallets import references
from wallets.models import PLATFORM_CURRENCY, Account, Player


def player_accounts(*, player: Player) -> dict[str, Account]:
    return {a.bucket: a for a in Account.objects.filter(player=player, kind=Account.Kind.PLAYER)}


def players_accounts(*, player_ids: list[int]) -> dict[int, dict[str, Account]]:
    """`player_accounts` of many players in one read."""
    out: dict[int, dict[str, Account]] = {pk: {} for pk in player_ids}
    for a in Account.objects.filter(player_id__in=player_ids, kind=Account.Kind.PLAYER):
        out[a.player_id][a.bucket] = a
    return out


def platform_accounts() -> dict[str, Account]:
    """Every platform account by code, created on first use (they are append-only sinks): one
    read once they exist."""
    accounts = _platform_read()
    if accounts.keys() >= PLATFORM_CURRENCY.keys():
        return accounts
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
    return _platform_read()


def _platform_read() -> dict[str, Account]:
    accounts = Account.objects.filter(kind=Account.Kind.PLATFORM)
    return {references.parse_account_code(a.code).name: a for a in accounts}
