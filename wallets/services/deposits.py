"""Money in from outside: payment-gateway deposits (GST-inclusive), practice chips.

A deposit is one transfer: gateway clearing -amount, the deposit bucket +credited, GST payable
+gst (`wallets.tax.formulas.gst_split`: rate/(100 + rate) of the amount, the parts add up to it
exactly, at the rate in force when it is recorded: `wallets.tax.gst_rates`), and its own record of
that rate (`DepositGst`). With the GST cashback setting at "bonus", the GST amount is credited
again as bonus (`bonus_grant`). A player's first deposit brings the sign-up bonus
(`bonus_signup`), after every check a deposit passes: real money open to the player, no
self-exclusion.
A deposit's reference is its natural key: the same reference with the same amount for the same
player from the same payments client is the same deposit, whenever it comes back (deposits
stored before GST keep their shape and are answered as they were); with anything else it is a
conflict, which tells another client nothing about the first deposit.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.db import IntegrityError, transaction
from djmoney.money import Money

from rummy_ledger.api.models import ApiClient
from rummy_ledger.events.event_types import EventType
from rummy_ledger.events.record import event_record
from wallets import references
from wallets.errors import DepositBelowMinimum, IdempotencyConflict
from wallets.models import (
    Account,
    BonusLot,
    Bucket,
    DepositGst,
    Entry,
    GatewayDeposit,
    PlatformAccount,
    Player,
    Transfer,
)
from wallets.money.amounts import ZERO, amount_text
from wallets.money.formatting import money
from wallets.services.accounts import platform_accounts, player_accounts
from wallets.services.bonuses import bonus_grant, bonus_signup
from wallets.services.client_guards import player_client_link
from wallets.services.players import player_get_or_create, player_lock
from wallets.services.protection import deposit_allowed
from wallets.services.real_money import real_money_check, region_report
from wallets.services.transfers import Leg, Posted, transfer_post
from wallets.services.wind_down import wind_down_check
from wallets.tax import formulas
from wallets.tax.gst_rates import gst_rate_now

CASHBACK_OFF, CASHBACK_BONUS = "off", "bonus"


@dataclass(frozen=True)
class Deposit:
    transfer_id: int
    created: bool
    amount: Decimal
    gst: Decimal
    credited: Decimal
    gst_rate: Decimal  # percent; 0 for a deposit recorded before GST


@transaction.atomic
def deposit_register(
    *,
    player_external_id: str,
    amount: Money,
    reference: str,
    region: str = "",
    changed_by: str = "",
    client: ApiClient | None = None,
) -> Deposit:
    """Credit a payment-gateway deposit made through `client` (None: the service itself), net of
    GST, once per reference (registers the player if new; records their region when given).
    The player's row is locked first: one player's money in and out run in turn, so the checks
    on the player's history (real money, self-exclusion, deposit limits) run between the lock
    and the posting, and concurrent deposits cannot together pass a limit. A deposit already
    made is answered as it was, to the client that made it."""
    player = player_lock(external_id=player_external_id, create=True)
    if client is not None:
        player_client_link(player=player, client=client)
    key = references.join(Transfer.Kind.DEPOSIT, reference)
    stored = (
        Transfer.objects.filter(idempotency_key=key).prefetch_related("entries__account").first()
    )
    if stored is not None:
        return _made_before(
            stored, player=player, amount=amount, reference=reference, client=client
        )
    _deposit_checks(player=player, amount=amount, region=region, changed_by=changed_by)
    rate = gst_rate_now()
    split = formulas.gst_split(amount.amount, rate_percent=rate)
    deposit = player_accounts(player=player)[Bucket.DEPOSIT]
    posted = _deposit_post(
        deposit=deposit, amount=amount, split=split, rate=rate, reference=reference, key=key
    )
    record = _gateway_record(reference=reference, client=client, transfer_id=posted.transfer_id)
    gst = Money(split.gst, amount.currency)
    _deposit_bonuses(
        player=player, deposit=deposit, posted=posted, gst=gst, reference=reference, key=key
    )
    event_record(EventType.DEPOSIT_CREDITED, client_id=record.client_id, subject=record)
    return Deposit(
        posted.transfer_id, posted.created, split.amount, split.gst, split.credited, rate
    )


def _made_before(
    stored: Transfer, *, player: Player, amount: Money, reference: str, client: ApiClient | None
) -> Deposit:
    """The answer to a reference already used: the deposit as it was, to the client that made
    it; anyone else gets the one refusal."""
    owner = GatewayDeposit.objects.filter(transfer=stored).values_list("client_id").first()
    if owner is None or owner[0] != (client and client.pk):
        raise _reference_used(reference)
    return _as_stored(stored, player=player, amount=amount, reference=reference)


def _deposit_checks(*, player: Player, amount: Money, region: str, changed_by: str) -> None:
    """What a new deposit must pass, under the player's lock, in this order: the minimum, the
    region (recorded when given), a wind-down, real money, the player's limits."""
    if amount.amount < settings.DEPOSIT_MINIMUM:
        raise DepositBelowMinimum(
            f"the smallest deposit taken is {amount_text(settings.DEPOSIT_MINIMUM)}",
            details={
                "amount": amount_text(amount.amount),
                "minimum": amount_text(settings.DEPOSIT_MINIMUM),
            },
        )
    if region:
        region_report(player=player, region=region, changed_by=changed_by)
    wind_down_check("deposits")  # a wind-down closing the real-money book
    real_money_check(players=[player])
    deposit_allowed(player=player, amount=amount.amount)


def _deposit_post(
    *,
    deposit: Account,
    amount: Money,
    split: formulas.GstSplit,
    rate: Decimal,
    reference: str,
    key: str,
) -> Posted:
    """The deposit's transfer (gateway clearing to the deposit bucket and GST payable) and, when
    it is new, its record of the GST rate."""
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
        memo=(
            f"deposit {money(amount)} = {money(split.credited)} credited "
            f"+ {money(split.gst)} GST at {rate}%"
        ),
    )
    if posted.created:
        DepositGst.objects.create(
            transfer_id=posted.transfer_id, rate_percent=rate, amount=split.amount, gst=split.gst
        )
    return posted


def _gateway_record(
    *, reference: str, client: ApiClient | None, transfer_id: int
) -> GatewayDeposit:
    """Who made the deposit under this reference (refused if another player's deposit took the
    reference meanwhile)."""
    try:
        with transaction.atomic():
            return GatewayDeposit.objects.create(
                reference=reference, client=client, transfer_id=transfer_id
            )
    except IntegrityError as exc:
        raise _reference_used(reference) from exc


def _deposit_bonuses(
    *, player: Player, deposit: Account, posted: Posted, gst: Money, reference: str, key: str
) -> None:
    """The sign-up bonus on a player's first deposit; the GST cashback as bonus when the setting
    says so (once: on the deposit's first posting)."""
    if _first_deposit(deposit_account_id=deposit.pk, transfer_id=posted.transfer_id):
        bonus_signup(player=player)
    if posted.created and gst.amount and settings.GST_CASHBACK == CASHBACK_BONUS:
        bonus_grant(
            player=player,
            amount=gst,
            source=BonusLot.Source.CASHBACK,
            reference=reference,
            idempotency_key=references.join(key, "cashback"),
            memo=f"GST cashback on deposit {reference}",
        )


def _first_deposit(*, deposit_account_id: int, transfer_id: int) -> bool:
    """Whether this deposit transfer is the first that credited the player's deposit bucket."""
    return not (
        Entry.objects.filter(account_id=deposit_account_id, transfer__kind=Transfer.Kind.DEPOSIT)
        .exclude(transfer_id=transfer_id)
        .exists()
    )


def _reference_used(reference: str) -> IdempotencyConflict:
    """The one refusal of a reference used before, whoever used it: nothing about that deposit."""
    return IdempotencyConflict(
        f"deposit reference {reference!r} was already used for another deposit",
        details={"reference": reference},
    )


def _as_stored(stored: Transfer, *, player: Player, amount: Money, reference: str) -> Deposit:
    """The deposit this reference already made, if it is the same one; else a conflict."""
    record = DepositGst.objects.filter(transfer=stored).first()
    moved = deposit_moved(
        transfer_id=stored.pk,
        legs=stored.entries.all(),
        rate=record.rate_percent if record is not None else None,
    )
    if moved is None:
        raise _reference_used(reference)
    deposit, credited = moved
    if credited.pk != player_accounts(player=player)[Bucket.DEPOSIT].pk:
        raise _reference_used(reference)
    if deposit.amount != amount.amount:
        raise _reference_used(reference)
    return deposit


_CLEARING = references.platform_account_code(PlatformAccount.GATEWAY_CLEARING)
_GST = references.platform_account_code(PlatformAccount.GST_PAYABLE)


def deposit_moved(
    *, transfer_id: int, legs: Iterable[Entry], rate: Decimal | None
) -> tuple[Deposit, Account] | None:
    """A deposit read back from its transfer's legs (each with its account): gateway clearing
    -amount, the player's deposit bucket +credited, GST payable +gst (no leg for a deposit of a
    few paise); `rate` its GST record's (None: recorded before GST, 0). With the account
    credited; None when the transfer credited no player."""
    legs = list(legs)
    credit = next((e for e in legs if e.account.kind == Account.Kind.PLAYER), None)
    if credit is None:
        return None
    by_code = {e.account.code: e.amount.amount for e in legs}
    deposit = Deposit(
        transfer_id=transfer_id,
        created=False,
        amount=-by_code.get(_CLEARING, ZERO),
        gst=by_code.get(_GST, ZERO),
        credited=credit.amount.amount,
        gst_rate=ZERO if rate is None else rate,
    )
    return deposit, credit.account


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
