"""Players: registered with their accounts (one per bucket) and the sign-up bonus, and locked.
Reading accounts is `wallets.services.accounts`."""

from django.conf import settings
from django.db import OperationalError, connection
from django.db.models import Count, Q
from djmoney.money import Money

from rummy_ledger import ids
from rummy_ledger.errors import DomainError
from wallets import references
from wallets.errors import LedgerBusy, UnknownPlayer
from wallets.models import BUCKET_CURRENCY, Account, Player


def player_get_or_create(*, external_id: str) -> Player:
    """The player with this platform id, registered with one account per bucket if new.

    Safe under concurrency: inserts that lose a race are ignored, then everything is re-read.
    A registered player with every account is one read: no INSERT ... ON CONFLICT, which costs
    two more round trips and waits behind any transaction holding the player's accounts.
    An id outside the safe alphabet (`rummy_ledger.ids`) is never registered. A new wallet
    gets no bonus: the sign-up bonus comes with the first deposit (`deposit_register`).
    """
    return players_get_or_create(external_ids=[external_id])[external_id]


def players_get_or_create(*, external_ids: list[str]) -> dict[str, Player]:
    """`player_get_or_create` for a table of players: the registered ones in one read."""
    for external_id in external_ids:
        if not ids.is_external_id(external_id):
            raise DomainError(f"a player id is {ids.RULE}", details={"player": external_id})
    known = (
        Player.objects.filter(external_id__in=external_ids)
        .annotate(accounts_n=Count("accounts", filter=Q(accounts__kind=Account.Kind.PLAYER)))
        .order_by()
    )
    players = {p.external_id: p for p in known if p.accounts_n == len(BUCKET_CURRENCY)}
    for external_id in external_ids:
        if external_id not in players:
            players[external_id] = _register(external_id)
    return players


def _register(external_id: str) -> Player:
    Player.objects.bulk_create([Player(external_id=external_id)], ignore_conflicts=True)
    player = Player.objects.get(external_id=external_id)
    Account.objects.bulk_create(
        [
            Account(
                kind=Account.Kind.PLAYER,
                code=references.player_account_code(external_id, bucket),
                player=player,
                bucket=bucket,
                balance=Money(0, currency),
            )
            for bucket, currency in BUCKET_CURRENCY.items()
        ],
        ignore_conflicts=True,
    )
    return player


def player_lock(*, external_id: str, create: bool = False) -> Player:
    """The player's row, locked until the transaction ends (inside one).

    Deposits, withdrawals and the year end of one player take it first, so they run one at a
    time and each reads a stable tax history; the ledger then locks the accounts (always the
    player, then accounts: game entries lock accounts only, so nothing waits in a circle). The
    lock is FOR NO KEY UPDATE: rows that merely reference the player (a game's seat, whose
    foreign key check takes KEY SHARE while its entry holds account locks) never wait for it,
    which would close a circle. The wait is bounded like the ledger's: a busy player is a
    retryable 409.
    """
    if create:
        player_get_or_create(external_id=external_id)
    _lock_timeout_set()
    try:
        return Player.objects.select_for_update(no_key=True).get(external_id=external_id)
    except Player.DoesNotExist as exc:
        raise UnknownPlayer(f"no player {external_id!r}") from exc
    except OperationalError as exc:
        if _lock_timed_out(exc):
            raise LedgerBusy(f"player {external_id} is busy: try again") from exc
        raise


def players_lock(*, ids: list[int], skip_locked: bool = False) -> list[Player]:
    """Many players' rows locked as `player_lock` locks one, in id order (two transactions
    locking overlapping sets never wait in a circle). `skip_locked`: the players another
    transaction holds are left out rather than waited for."""
    _lock_timeout_set()
    rows = Player.objects.select_for_update(no_key=True, skip_locked=skip_locked)
    try:
        return list(rows.filter(pk__in=ids).order_by("pk"))
    except OperationalError as exc:
        if _lock_timed_out(exc):
            raise LedgerBusy(f"{len(ids)} player(s) are busy: try again") from exc
        raise


def _lock_timeout_set() -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('lock_timeout', %s, true)", [f"{settings.LEDGER_LOCK_TIMEOUT_MS}ms"]
        )


def _lock_timed_out(exc: OperationalError) -> bool:
    return getattr(exc.__cause__, "sqlstate", None) == "55P03"
