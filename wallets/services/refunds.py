"""Where a withdrawal's money comes from, and whether it needs a PAN
(docs/regions-and-real-money.md).

With real money on, a withdrawal takes winnings only. When real money is off for the player
(`REAL_MONEY=off`, or `restricted` and their region blocked or unknown), nothing they hold can
be played for money any more: a withdrawal takes the winnings first, then the deposit bucket
(a refund), and the answer says how much came from each. TDS is Rule 133's as for any
withdrawal (the year's aggregate: a refund owes TDS when earlier withdrawals took winnings
untaxed). A withdrawal whose net winnings are <= 0 owes no TDS and, with real money off, needs
no PAN. A withdrawal that fails or is rejected goes back to the buckets it came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from djmoney.money import Money

from wallets.errors import InsufficientFunds, KycRequired
from wallets.models import CASH, Account, Bucket, KycStatus, Player, Withdrawal
from wallets.money.amounts import amount_text
from wallets.services.real_money import real_money_for
from wallets.services.transfers import Leg
from wallets.tax import formulas


def winnings_only(player: Player) -> bool:
    """Real money is on for the player: a withdrawal takes winnings only."""
    return real_money_for(player=player).available


@dataclass(frozen=True)
class Sources:
    winnings: Decimal
    deposit: Decimal

    def legs(self, accounts: dict[str, Account], sign: int) -> list[Leg]:
        """The buckets' legs (signed: -1 takes from them, +1 gives back), non-zero ones only."""
        parts = ((Bucket.WINNINGS, self.winnings), (Bucket.DEPOSIT, self.deposit))
        return [Leg(accounts[b].pk, Money(sign * x, CASH)) for b, x in parts if x > 0]


def withdrawal_sources(*, player: Player, accounts: dict[str, Account], amount: Decimal) -> Sources:
    """Winnings first; then, only when real money is off for the player, the deposit bucket."""
    winnings = accounts[Bucket.WINNINGS].balance.amount
    if winnings_only(player):
        if amount > winnings:
            raise short(winnings, amount, buckets=(Bucket.WINNINGS,))
        return Sources(amount, formulas.ZERO)
    deposit = accounts[Bucket.DEPOSIT].balance.amount
    if amount > winnings + deposit:
        raise short(winnings + deposit, amount, buckets=(Bucket.WINNINGS, Bucket.DEPOSIT))
    taken = min(amount, winnings)
    return Sources(taken, amount - taken)


def withdrawn_from(withdrawal: Withdrawal) -> Sources:
    return Sources(withdrawal.amount.amount - withdrawal.from_deposit, withdrawal.from_deposit)


def short(balance: Decimal, amount: Decimal, *, buckets: tuple[str, ...]) -> InsufficientFunds:
    names = " and ".join(buckets)
    return InsufficientFunds(
        f"only {amount_text(balance)} INR of {names} can be withdrawn, not {amount_text(amount)}",
        details={
            "bucket": "+".join(buckets),
            "balance": amount_text(balance),
            "requested": amount_text(amount),
        },
    )


def pan_required(*, player: Player, net_winnings: Decimal) -> bool:
    """Every withdrawal needs a verified PAN, except, with real money off for the player, one
    whose net winnings are <= 0 (no TDS to report against a PAN)."""
    return net_winnings > 0 or winnings_only(player)


def kyc_required(player: Player) -> KycRequired:
    return KycRequired(
        f"player {player.external_id} has no verified PAN (KYC {player.kyc_status}): "
        "withdrawals need one",
        details={"player": player.external_id, "kyc_status": player.kyc_status},
    )


def kyc_checked(*, player: Player, pan_needed: bool) -> None:
    if pan_needed and player.kyc_status != KycStatus.VERIFIED:
        raise kyc_required(player)
