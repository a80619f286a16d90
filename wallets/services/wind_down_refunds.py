"""The wind-down's refunds (step 3 of `wallets.services.wind_down`), a chunk of players at once.

A chunk is one transaction: its players locked in id order (those another run holds are
skipped, and tried again alone at the end), then a few reads for all of them (their accounts,
the wind-down refunds they have had, their year's tax positions), their refunds issued with
one INSERT and one ledger call (`withdrawals_issue_approved`), and their report lines written
with one upsert. What decides a player's refund is read under their lock, and the refund's
reference (`wind-down-<player>`, then `-2`, ...) is unique in the database: a run killed
mid-chunk rolls the chunk back whole, and the next run, or one running at the same time,
issues no second refund and misses nobody.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from django.db import transaction
from djmoney.money import Money

from rummy_ledger.api.models import ApiClient
from wallets.models import (
    CASH,
    Account,
    Bucket,
    KycStatus,
    Player,
    WindDown,
    WindDownLine,
    Withdrawal,
)
from wallets.services.accounts import players_accounts
from wallets.services.players import players_lock
from wallets.services.transfers import ledger_now
from wallets.services.withdrawals import withdrawal_new, withdrawals_issue_approved
from wallets.tax import formulas
from wallets.tax.tds import TaxPosition, tax_positions

ZERO = formulas.ZERO
Held = WindDownLine.Held
IN_FLIGHT = (Withdrawal.Status.REQUESTED, Withdrawal.Status.APPROVED)
PREFIX = "wind-down-"
LINE_FIELDS = ["refunded", "tds", "held", "held_reason", "refunds", "withdrawal", "updated_at"]


def refund_references(external_id: str, count: int) -> list[str]:
    first = f"{PREFIX}{external_id}"
    return [first] + [f"{first}-{n}" for n in range(2, count + 1)]


def refundable(*, verified: bool, held: Decimal, untaxed: Decimal) -> Decimal:
    """What a refund gives back of the `held` deposit + winnings: all of it with verified KYC;
    without, what owes no TDS (needs no PAN): up to the point where the year's net winnings
    reach zero (`untaxed`: the year's net winnings before it, `TaxPosition.untaxed`), so the
    deposits come back and the winnings stay."""
    return held if verified else min(held, max(ZERO, -untaxed))


@dataclass(frozen=True)
class Outcome:
    line: WindDownLine
    issued: Withdrawal | None  # the refund issued now


@dataclass(frozen=True)
class Chunk:
    outcomes: list[Outcome]
    skipped: list[int]  # players another transaction held: not done


@transaction.atomic
def refunds_issue(
    *,
    wind_down: WindDown,
    client: ApiClient,
    platform: dict[str, Account],
    player_ids: list[int],
    wait: bool = False,
) -> Chunk:
    """Refund the players of `player_ids` (one transaction): each gets a refund unless one is
    still with the gateway, and their line says where they stand. `wait`: wait for a player
    another transaction holds (bounded: `LedgerBusy`) rather than skip them."""
    players = players_lock(ids=player_ids, skip_locked=not wait)
    locked = {p.pk for p in players}
    skipped = [pk for pk in player_ids if pk not in locked]
    if not players:
        return Chunk([], skipped)
    ids = sorted(locked)
    accounts = players_accounts(player_ids=ids)
    seen = _history(wind_down=wind_down, ids=ids)
    plans = []
    for player in players:
        count = seen.issued_before.get(player.pk, 0)
        mine = _refunds(seen.refunds[player.pk], player.external_id, count)
        in_flight = any(w.status in IN_FLIGHT for w in mine)
        new = None
        if not in_flight:
            new = _refund_new(
                player=player,
                client=client,
                accounts=accounts[player.pk],
                position=seen.positions[player.pk],
                reference=refund_references(player.external_id, count + 1)[-1],
                first=player.pk not in seen.approved_before,
            )
        plans.append((player, mine, in_flight, new))
    withdrawals_issue_approved(
        issued=[new for *_, new in plans if new is not None], accounts=accounts, platform=platform
    )
    outcomes = _lines_write(wind_down=wind_down, plans=plans, accounts=accounts, seen=seen)
    return Chunk(outcomes, skipped)


@dataclass(frozen=True)
class _History:
    """What the chunk's players have had, read under their locks."""

    issued_before: dict[int, int]  # refunds of every wind-down, by player
    on_line: dict[int, int]  # of this one
    refunds: dict[int, dict[str, Withdrawal]]  # their wind-down refunds, by reference
    positions: dict[int, TaxPosition]  # the year's tax positions
    approved_before: set[int]  # players with a withdrawal approved or paid before


def _history(*, wind_down: WindDown, ids: list[int]) -> _History:
    issued_before: dict[int, int] = {}
    on_line: dict[int, int] = {}
    lines = WindDownLine.objects.filter(player_id__in=ids)
    for wind_down_id, player_id, n in lines.values_list("wind_down_id", "player_id", "refunds"):
        issued_before[player_id] = issued_before.get(player_id, 0) + n
        if wind_down_id == wind_down.pk:
            on_line[player_id] = n
    refunds: dict[int, dict[str, Withdrawal]] = {pk: {} for pk in ids}
    for w in Withdrawal.objects.filter(player_id__in=ids, reference__startswith=PREFIX):
        refunds[w.player_id][w.reference] = w
    positions = tax_positions(player_ids=ids, fy=formulas.financial_year_of(ledger_now()))
    approved_before = set(
        Withdrawal.objects.filter(
            player_id__in=ids, status__in=[Withdrawal.Status.APPROVED, Withdrawal.Status.PAID]
        ).values_list("player_id", flat=True)
    )
    return _History(issued_before, on_line, refunds, positions, approved_before)


def _lines_write(
    *, wind_down: WindDown, plans: list, accounts: dict, seen: _History
) -> list[Outcome]:
    """Each player's line, where they stand once their refund is issued, in one upsert."""
    outcomes = []
    for player, mine, in_flight, new in plans:
        issued = new[0] if new is not None else None
        line = WindDownLine(
            wind_down=wind_down,
            player=player,
            refunds=seen.on_line.get(player.pk, 0) + (issued is not None),
            **_standing(player, accounts[player.pk], mine, in_flight, issued),
        )
        outcomes.append(Outcome(line, issued))
    WindDownLine.objects.bulk_create(
        [o.line for o in outcomes],
        update_conflicts=True,
        unique_fields=["wind_down", "player"],
        update_fields=LINE_FIELDS,
    )
    return outcomes


def _refunds(by_reference: dict[str, Withdrawal], external_id: str, count: int):
    """The player's wind-down refunds, the first `count` references."""
    references = refund_references(external_id, count) if count else []
    return [by_reference[r] for r in references if r in by_reference]


def _held(accounts: dict[str, Account]) -> Decimal:
    return accounts[Bucket.DEPOSIT].balance.amount + accounts[Bucket.WINNINGS].balance.amount


def _refund_new(*, player: Player, accounts, position, reference: str, client, first: bool):
    """The refund a player gets now (not saved), and where it comes from; None: nothing."""
    verified = player.kyc_status == KycStatus.VERIFIED
    amount = refundable(verified=verified, held=_held(accounts), untaxed=position.untaxed)
    if amount <= 0:
        return None
    return withdrawal_new(
        player=player,
        client=client,  # the gateway that reports the refund paid or failed
        reference=reference,
        amount=Money(amount, CASH),
        accounts=accounts,
        position=position,
        first=first,
    )


def _standing(player, accounts, mine: list[Withdrawal], in_flight: bool, issued) -> dict:
    """Where the player stands once the refund (if any) is issued: what their wind-down refunds
    took and its TDS, what they still hold and why, the last refund."""
    refunds = [*mine, issued] if issued is not None else mine
    counted = [w for w in refunds if w.status in Withdrawal.COUNTED]
    held = _held(accounts) - (issued.amount.amount if issued is not None else ZERO)
    if in_flight:
        reason = Held.IN_FLIGHT
    elif held and player.kyc_status != KycStatus.VERIFIED:
        reason = Held.NO_KYC
    else:
        reason = Held.NONE
    return {
        "refunded": sum((w.amount.amount for w in counted), ZERO),
        "tds": sum((w.tds.amount for w in counted), ZERO),
        "held": held,
        "held_reason": reason,
        "withdrawal": refunds[-1] if refunds else None,
    }
