"""Reads of wallets that need a little thought."""

from rummy_ledger.errors import NotFound
from wallets.models import Account, Player


def player_by_external_id(external_id: str) -> Player:
    player = Player.objects.filter(external_id=external_id).first()
    if player is None:
        raise NotFound(f"no player {external_id!r}", code="unknown_player")
    return player


def wallet_balances(*, player: Player) -> dict[str, dict[str, str]]:
    """The player's balance per bucket, as decimal strings with their currency."""
    accounts = Account.objects.filter(player=player, kind=Account.Kind.PLAYER).order_by("bucket")
    return {
        a.bucket: {"amount": f"{a.balance.amount:.2f}", "currency": a.currency} for a in accounts
    }
