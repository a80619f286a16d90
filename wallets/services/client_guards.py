"""The guards a superuser turns on per games client (docs/trust-model.md): a leaked games key
can stake only its paired payments clients' players, and only so much an hour.

- `players_seatable_check`: with `paired_players_only`, every player must have been reported
  (a deposit or a KYC result: `player_client_link`) by a payments client the games client is
  paired with (`ClientPairing`); 403 `player_not_paired` naming the others.
- `escrow_cap_take`: with `hourly_escrow_cap`, the INR its games and tournaments took into
  escrow in the last hour plus this take must stay within the cap; 409 `client_cap`. The one
  function every taking into escrow calls (game entries and rejoins, tournament entries and
  rebuys), which records the take (`ClientEscrowTake`, in the caller's transaction: a refused
  or rolled-back entry leaves none). It locks the client's row until the transaction ends, so
  concurrent takes of one client count each other. A client without a cap takes no lock and
  records nothing: a cap turned on counts the takes from then on.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import timedelta
from decimal import Decimal

from django.db.models import Sum
from django.utils import timezone

from rummy_ledger.api.models import ApiClient
from wallets.errors import ClientCapReached, PlayerNotPaired
from wallets.models import CASH, ClientEscrowTake, ClientPairing, Player, PlayerClient
from wallets.money.amounts import amount_text

CAP_WINDOW = timedelta(hours=1)


def player_client_link(*, player: Player, client: ApiClient) -> None:
    """`client` (payments) reported this player: one of its players from now on."""
    PlayerClient.objects.bulk_create(
        [PlayerClient(player=player, client=client)], ignore_conflicts=True
    )


def players_seatable_check(
    *, client: ApiClient, players: Sequence[Player], paired: Collection[int] | None = None
) -> None:
    """`paired`: the ids of the players a paired payments client reported, when the caller read
    them already (a game's opening)."""
    if not client.paired_players_only:
        return
    known = set(paired) if paired is not None else _paired(client, players)
    others = [p.external_id for p in players if p.pk not in known]
    if others:
        raise PlayerNotPaired(
            f"{client.name} seats only players of the payments clients it is paired with, "
            f"not {', '.join(others)}",
            details={"players": others},
        )


def _paired(client: ApiClient, players: Sequence[Player]) -> set[int]:
    payments = ClientPairing.objects.filter(games_client=client).values("payments_client")
    return set(
        PlayerClient.objects.filter(
            client__in=payments, player__in=[p.pk for p in players]
        ).values_list("player_id", flat=True)
    )


def escrow_cap_take(*, client: ApiClient, amount: Decimal, currency: str) -> None:
    """Refuse a take into escrow that would pass the client's cap for the last hour."""
    if client.hourly_escrow_cap is None or currency != CASH or amount <= 0:
        return
    cap = (
        ApiClient.objects.select_for_update(no_key=True)
        .values_list("hourly_escrow_cap", flat=True)
        .get(pk=client.pk)
    )
    if cap is None:
        return
    since = timezone.now() - CAP_WINDOW
    takes = ClientEscrowTake.objects.filter(client_id=client.pk, created_at__gte=since)
    taken = takes.aggregate(total=Sum("amount"))["total"] or Decimal(0)
    if taken + amount > cap:
        raise ClientCapReached(
            f"{client.name} may take at most {amount_text(cap)} INR into escrow in an hour: "
            f"{amount_text(taken)} taken, {amount_text(amount)} more refused",
            details={
                "cap": amount_text(cap),
                "taken": amount_text(taken),
                "amount": amount_text(amount),
            },
        )
    ClientEscrowTake.objects.create(client_id=client.pk, amount=amount)
