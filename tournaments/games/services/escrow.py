"""Money between the players' wallets and a game's escrow, always through `transfers_post`.

Every settlement posts all of its transfers in ONE `transfers_post` call, so the ledger locks the
accounts it touches in one fixed (id) order: no deadlock between games sharing players. The
idempotency keys are per game (`game:<pk>:settlement`, `game:<pk>:refunds`), so even a
settlement that somehow ran twice could not pay twice: the ledger would return the first ones.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal

from djmoney.money import Money

from tournaments.models import Game, GamePlayer
from tournaments.payouts import (
    ZERO,
    Settlement,
    bonus_cap,
    charge_by_bucket,
    refund_by_bucket,
)
from tournaments.references import game_key, game_reference
from wallets import references
from wallets.errors import InsufficientFunds
from wallets.models import CHIPS, Account, BonusLot, Bucket, PlatformAccount, Transfer
from wallets.money.amounts import amount_text
from wallets.services.accounts import platform_accounts
from wallets.services.bonuses import BonusReturn, bonus_lots_locked, bonus_restore, bonus_spend
from wallets.services.transfers import Leg, Posted, TransferRequest, transfers_post


class PlayersShort(InsufficientFunds):
    """Some players of a game cannot pay its entry; the details name every one of them."""


FEE_ACCOUNT_CODE = references.platform_account_code(PlatformAccount.FEE_REVENUE)


def fee_account_id() -> int:
    pk = Account.objects.filter(code=FEE_ACCOUNT_CODE).values_list("pk", flat=True).first()
    return pk if pk is not None else platform_accounts()[PlatformAccount.FEE_REVENUE].pk


def escrow_create(*, owner: object, name: str, currency: str) -> Account:
    return Account.objects.create(
        kind=Account.Kind.ESCROW,
        code=references.escrow_account_code(owner, name),
        balance=Money(ZERO, currency),
    )


def wallet_accounts(player_ids: Iterable[int]) -> dict[tuple[int, str], Account]:
    accounts = Account.objects.filter(player_id__in=list(player_ids), kind=Account.Kind.PLAYER)
    return {(a.player_id, a.bucket): a for a in accounts}


def contributions(seat: GamePlayer) -> list[tuple[str, Decimal]]:
    return [(bucket, Decimal(amount)) for bucket, amount in seat.contributed]


def paid_merged(paid: list, charged: list[tuple[str, Decimal]]) -> list[list[str]]:
    """`[[bucket, amount], ...]` (as stored, in the order charged) with `charged` added."""
    merged: dict[str, Decimal] = {bucket: Decimal(amount) for bucket, amount in paid}
    for bucket, amount in charged:
        merged[bucket] = merged.get(bucket, ZERO) + amount
    return [[bucket, amount_text(amount)] for bucket, amount in merged.items()]


@dataclass(frozen=True)
class EntryPlans:
    """How each player would pay an entry (bucket, amount in the order charged), with the
    accounts read and the bonus lots locked for it; `short`: player id -> what is missing."""

    accounts: dict[tuple[int, str], Account]
    lots: dict[int, list[BonusLot]]
    plans: dict[int, list[tuple[str, Decimal]]]
    short: dict[int, Decimal]


def entry_plans(
    *,
    player_ids: Sequence[int],
    order: Sequence[str],
    amount: Decimal,
    cap_percent: Decimal,
    accounts: dict[tuple[int, str], Account] | None = None,
) -> EntryPlans:
    """Plan the entry of `amount` for every player, nothing posted: the buckets in `order`, bonus
    only as far as its lots have not expired and at most `cap_percent` % of the entry. The lots
    of the players holding bonus are locked before the ledger locks the accounts
    (`wallets.services.bonuses`). A caller that read the `accounts` already passes them."""
    caps = {Bucket.BONUS: bonus_cap(amount, cap_percent)}
    if accounts is None:
        accounts = wallet_accounts(player_ids)
    holders = [
        player_id
        for player_id in player_ids
        if Bucket.BONUS in order
        and (player_id, Bucket.BONUS) in accounts
        and accounts[(player_id, Bucket.BONUS)].balance.amount > 0
    ]
    lots = bonus_lots_locked(player_ids=holders) if holders else {}
    plans: dict[int, list[tuple[str, Decimal]]] = {}
    short: dict[int, Decimal] = {}
    for player_id in player_ids:
        balances = {
            bucket: accounts[(player_id, bucket)].balance.amount
            for bucket in order
            if (player_id, bucket) in accounts
        }
        if Bucket.BONUS in balances:
            spendable = sum((lot.remaining for lot in lots.get(player_id, [])), ZERO)
            balances[Bucket.BONUS] = min(balances[Bucket.BONUS], spendable)
        plan = charge_by_bucket(balances, order, amount, caps)
        if plan is None:
            usable = sum((min(b, caps.get(k, b)) for k, b in balances.items()), ZERO)
            short[player_id] = amount - usable
        else:
            plans[player_id] = plan
    return EntryPlans(accounts, lots, plans, short)


def entry_legs(
    *,
    plans: EntryPlans,
    player_id: int,
    bonus_reference: str,
    escrow_id: int,
    currency: str,
) -> list[Leg]:
    """Spend the bonus lots a player's plan takes (recorded under `bonus_reference`, for its
    refund) and the legs of the entry: the buckets out, the escrow in."""
    plan = plans.plans[player_id]
    for bucket, taken in plan:
        if bucket == Bucket.BONUS:
            bonus_spend(
                lots=plans.lots, player_id=player_id, amount=taken, reference=bonus_reference
            )
    legs = [Leg(plans.accounts[(player_id, b)].pk, -Money(a, currency)) for b, a in plan]
    legs.append(Leg(escrow_id, Money(sum((a for _, a in plan), ZERO), currency)))
    return legs


def short_players(exc: InsufficientFunds) -> list[str]:
    """The players whose accounts the ledger found short (a concurrent spend)."""
    codes = [references.parse_account_code(c) for c in exc.details.get("accounts", [])]
    return sorted({c.player for c in codes if c.kind == references.PLAYER})


def entries_collect(
    *, game: Game, seats: Sequence[GamePlayer], amount: Decimal, entry_no: int
) -> Decimal:
    """Take `amount` from every seat's wallet into the escrow: all of them or none.

    Every player is checked before anything is posted, so the 409 names everyone who is short;
    the ledger's own overdraft check (a concurrent spend) is the backstop and names them too.
    """
    terms = game.game_terms
    plans = entry_plans(
        player_ids=[s.player_id for s in seats],
        order=terms.entry_buckets,
        amount=amount,
        cap_percent=terms.bonus_cap_percent,
    )
    requests = entry_requests(game=game, seats=seats, plans=plans, amount=amount, entry_no=entry_no)
    try:
        transfers_post(requests=requests)
    except InsufficientFunds as exc:
        raise entries_short(exc, amount, game) from exc
    return amount * len(seats)


def entry_requests(
    *, game: Game, seats: Sequence[GamePlayer], plans: EntryPlans, amount: Decimal, entry_no: int
) -> list[TransferRequest]:
    """The entry transfers of every seat by `plans` (`PlayersShort` naming everyone short), and
    each seat's `contributed` with them added (the caller posts and saves both)."""
    short = [s.player.external_id for s in seats if s.player_id in plans.short]
    if short:
        raise _short(short, amount, game)
    requests = [
        TransferRequest(
            kind=Transfer.Kind.ENTRY,
            reference=game_reference(game.pk),
            idempotency_key=game_key(game.pk, "entry", seat.player.external_id, entry_no),
            legs=entry_legs(
                plans=plans,
                player_id=seat.player_id,
                bonus_reference=_bonus_key(seat),
                escrow_id=game.escrow_id,
                currency=game.currency,
            ),
            memo=f"entry {entry_no} to {game.game_id}",
        )
        for seat in seats
    ]
    for seat in seats:
        seat.contributed = paid_merged(seat.contributed, plans.plans[seat.player_id])
    return requests


def entries_short(exc: InsufficientFunds, amount: Decimal, game: Game) -> PlayersShort:
    """The ledger found players short (a concurrent spend): the refusal names them."""
    return _short(short_players(exc), amount, game)


def _bonus_key(seat: GamePlayer) -> str:
    """What a seat's entries took from bonus lots is recorded under this key, for its refund."""
    return game_key(seat.game_id, "bonus", seat.player.external_id)


def _short(players: list[str], amount: Decimal, game: Game) -> PlayersShort:
    return PlayersShort(
        f"not enough money for the entry of {amount_text(amount)} {game.currency}: "
        f"{', '.join(players)}",
        details={"players": players, "amount": amount_text(amount), "currency": game.currency},
    )


@dataclass
class Release:
    """What emptying escrows must do: the transfers to post, and the bonus lots the refunds
    return to (restored before the transfers post: `release_post`, the one place)."""

    requests: list[TransferRequest] = field(default_factory=list)
    bonus_returns: list[BonusReturn] = field(default_factory=list)

    def add(self, other: Release) -> None:
        self.requests += other.requests
        self.bonus_returns += other.bonus_returns


def release_post(release: Release) -> list[Posted]:
    """Post what `settlement_release` said must happen: the bonus lots, then the transfers."""
    bonus_restore(returns=release.bonus_returns)
    return transfers_post(requests=release.requests)


def settlement_release(
    *,
    game: Game,
    seats: Sequence[GamePlayer],
    accounts: Mapping[int, Mapping[str, int]],
    settlement: Settlement,
    fee_id: int | None,
) -> Release:
    """The transfers that empty the escrow by `settlement`, at most two per game:

    - `game:<pk>:settlement` (kind settlement): prizes to winnings (chips to chips), the fee to
      the platform;
    - `game:<pk>:refunds` (kind refund): every refund, back to the buckets it came from.

    Records the amounts on the game and its seats (`accounts`: player pk -> bucket -> account
    id, as `tournaments.games.queries.seating` reads them), and returns the transfers with what the
    refunds return to bonus lots, for `release_post`.
    The keys are per game, so a game can never be paid twice whatever runs twice.
    """
    by_ext = {s.player.external_id: s for s in seats}
    release = Release()
    prizes = _prize_legs(game, by_ext, accounts, settlement, fee_id)
    memo = f"prizes and fee of {game.game_id}"
    _escrow_out(release, game, "settlement", Transfer.Kind.SETTLEMENT, prizes, memo)
    refunds = _refund_legs(release, game, by_ext, accounts, settlement)
    memo = f"escrow of {game.game_id} returned"
    _escrow_out(release, game, "refunds", Transfer.Kind.REFUND, refunds, memo)
    game.paid_out += sum(settlement.payouts.values(), ZERO)
    game.refunded += sum(settlement.refunds.values(), ZERO)
    game.fee += settlement.fee
    return release


def _escrow_out(
    release: Release, game: Game, key: str, kind: str, legs: list[Leg], memo: str
) -> None:
    """Add to `release` the transfer of `legs` out of the game's escrow (none without legs)."""
    if not legs:
        return
    out = -sum((leg.amount.amount for leg in legs), ZERO)
    release.requests.append(
        TransferRequest(
            kind=kind,
            reference=game_reference(game.pk),
            idempotency_key=game_key(game.pk, key),
            legs=[Leg(game.escrow_id, Money(out, game.currency)), *legs],
            memo=memo,
        )
    )


def _prize_legs(
    game: Game,
    by_ext: Mapping[str, GamePlayer],
    accounts: Mapping[int, Mapping[str, int]],
    settlement: Settlement,
    fee_id: int | None,
) -> list[Leg]:
    """The prizes (to winnings; chips to chips) and the fee, each payout recorded on its seat."""
    currency = game.currency
    prize_bucket = Bucket.CHIPS if currency == CHIPS else Bucket.WINNINGS
    prizes: list[Leg] = []
    for ext, amount in settlement.payouts.items():
        seat = by_ext[ext]
        seat.payout += amount
        if amount > 0:
            prizes.append(Leg(accounts[seat.player_id][prize_bucket], Money(amount, currency)))
    if settlement.fee > 0:
        prizes.append(Leg(fee_id or fee_account_id(), Money(settlement.fee, currency)))
    return prizes


def _refund_legs(
    release: Release,
    game: Game,
    by_ext: Mapping[str, GamePlayer],
    accounts: Mapping[int, Mapping[str, int]],
    settlement: Settlement,
) -> list[Leg]:
    """The refunds, each back to the buckets it came from (what goes back to bonus lots added
    to `release`), each recorded on its seat."""
    refunds: list[Leg] = []
    for ext, amount in settlement.refunds.items():
        seat = by_ext[ext]
        seat.refund += amount
        if amount > 0:
            back = refund_by_bucket(contributions(seat), amount, rounded_down=Bucket.BONUS)
            refunds += [Leg(accounts[seat.player_id][b], Money(a, game.currency)) for b, a in back]
            release.bonus_returns += [
                BonusReturn(_bonus_key(seat), a) for b, a in back if b == Bucket.BONUS
            ]
    return refunds
