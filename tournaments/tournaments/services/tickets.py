"""Tickets: a right to enter one tournament (the target), worth its entry fee, in its currency.

The books show what is outstanding: a ticket's value sits in the target's tickets account
(`Tournament.tickets_account`, an escrow account of the client) while the ticket is `active`.
Every move is a ledger transfer referenced `tournament:<target>`:

- a satellite pays a seat into the tickets account (`seat_payees`: the prize's transfer goes
  there instead of to winnings) and `tickets_won` records the tickets;
- registering with a ticket moves its value into the registration's escrow shard
  (`ticket_take`, the registration's `paid` is `[["ticket", value]]`); unregistering moves it
  back (the refund of the `ticket` bucket goes to the tickets account) and `tickets_returned`
  makes it `active` again;
- finance issues tickets from promotions (`TicketIssue`, maker-checker: `ticket_issue_propose`,
  `ticket_issue_apply` on approval), each with the issue's own expiry: past it, the ticket
  enters nothing and beat's `tickets_expire` sends its value back to promotions (`expired`);
- the target's start settles what is still active by its `tickets_unused` term
  (`tickets_settle`: `refund` to the winnings of a satellite's winner, `lapse` to promotions, or
  chips issuance for chips; a ticket finance issued goes back to promotions either way, never
  to winnings); a cancelled target first returns every used ticket (its registrations are
  refunded) and then refunds them all.

Lock order: the target's row, then tickets (`FOR UPDATE`), then the ledger's accounts.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from djmoney.money import Money

from rummy_ledger.api.models import ApiClient
from tournaments.models import Registration, Ticket, TicketIssue, Tournament
from tournaments.references import tournament_key, tournament_reference
from wallets.errors import ProposalInvalid
from wallets.models import CHIPS, Account, Bucket, PlatformAccount, Player, Transfer
from wallets.money.formatting import ist
from wallets.services.accounts import platform_accounts
from wallets.services.proposals import permission_required, reason_required
from wallets.services.transfers import Leg, TransferRequest, transfers_post

TICKET_BUCKET = "ticket"  # the `paid` bucket of an entry paid with a ticket
HELD = (Ticket.Status.ACTIVE, Ticket.Status.USED)


def player_tickets(
    *, client: ApiClient, player: str, after_id: int | None, count: int
) -> list[Ticket]:
    """A player's tickets for this client's tournaments (others' are not listed) after
    `after_id` (all when None), in id order, `count` at most."""
    held = Ticket.objects.filter(tournament__client=client, player__external_id=player)
    if after_id is not None:
        held = held.filter(pk__gt=after_id)
    return list(held.select_related("tournament").order_by("pk")[:count])


def ticket_take(tournament: Tournament, registration: Registration) -> bool:
    """Pay the registration's entry with the player's active ticket for this tournament, if it
    holds one: its value from the tickets account into the registration's escrow shard."""
    ticket = (
        Ticket.objects.select_for_update()
        .filter(tournament=tournament, player=registration.player, status=Ticket.Status.ACTIVE)
        .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()))
        .first()
    )
    if ticket is None:
        return False
    currency = tournament.currency
    transfers_post(
        requests=[
            TransferRequest(
                kind=Transfer.Kind.ENTRY,
                reference=tournament_reference(tournament.pk),
                idempotency_key=tournament_key(tournament.pk, "entry", registration.pk),
                legs=[
                    Leg(tournament.tickets_account_id, -Money(ticket.value, currency)),
                    Leg(registration.escrow_id, Money(ticket.value, currency)),
                ],
                memo=f"entry to tournament {tournament.slug} with ticket {ticket.pk}",
            )
        ]
    )
    ticket.status, ticket.registration = Ticket.Status.USED, registration
    ticket.save(update_fields=["status", "registration"])
    registration.paid = [[TICKET_BUCKET, str(ticket.value)]]
    registration.save(update_fields=["paid"])
    return True


def tickets_returned(registrations: list[Registration]) -> None:
    """The tickets these refunded registrations used are active again (their value went back
    to the tickets account with the refund)."""
    Ticket.objects.filter(registration__in=registrations).update(
        status=Ticket.Status.ACTIVE, registration=None
    )


def tickets_settle(tournament: Tournament, *, refund: bool) -> None:
    """Every active ticket for the tournament out of its tickets account, in one ledger call:
    `refund`: its value to the winner's winnings (chips: chips) and `refunded`; otherwise back to
    promotions (chips issuance) and `expired`."""
    tickets = list(
        Ticket.objects.select_for_update()
        .filter(tournament=tournament, status=Ticket.Status.ACTIVE)
        .order_by("pk")
    )
    _tickets_out(tournament, tickets, to="refund" if refund else "lapse")


def tickets_expire(*, limit: int = 1_000) -> int:
    """Beat's job: finance tickets still active past their own expiry, `limit` at most, out of
    their targets' tickets accounts back to promotions (one ledger call a target, transfers
    `...:ticket:<id>:expire`), `expired`; returns how many. A ticket taken or settled meanwhile
    is not one of them (its row is locked and checked again)."""
    now = timezone.now()
    due = (
        Ticket.objects.filter(status=Ticket.Status.ACTIVE, expires_at__lte=now)
        .order_by("expires_at")
        .values_list("tournament_id", flat=True)[:limit]
    )
    expired = 0
    for target_id in sorted(set(due)):
        with transaction.atomic():
            target = _share_locked(target_id)
            tickets = list(
                Ticket.objects.select_for_update()
                .filter(tournament=target, status=Ticket.Status.ACTIVE, expires_at__lte=now)
                .order_by("pk")[:limit]
            )
            _tickets_out(target, tickets, to="expire")
            expired += len(tickets)
    return expired


# The kind of a ticket's transfer out of its tickets account: a refund; a finance ticket's own
# expiry undoes its issue (a `bonus` from promotions), so it is not the target's settlement and
# the tournament P&L leaves it out; a lapse settles the target.
KINDS = {"refund": Transfer.Kind.REFUND, "expire": Transfer.Kind.BONUS_EXPIRY}


def _tickets_out(target: Tournament, tickets: list[Ticket], *, to: str) -> None:
    """The tickets' value out of the target's tickets account in one ledger call: `refund` to a
    satellite winner's winnings (chips: chips), a finance ticket's to promotions, `refunded`;
    `lapse` or `expire` to promotions (chips issuance), `expired`."""
    if not tickets:
        return
    refund = to == "refund"
    currency = target.currency
    winnings = Bucket.CHIPS if currency == CHIPS else Bucket.WINNINGS
    accounts = dict(
        Account.objects.filter(
            player_id__in=[t.player_id for t in tickets], bucket=winnings
        ).values_list("player_id", "pk")
    )
    transfers_post(
        requests=[
            TransferRequest(
                kind=KINDS.get(to, Transfer.Kind.SETTLEMENT),
                reference=tournament_reference(target.pk),
                idempotency_key=tournament_key(target.pk, "ticket", t.pk, to),
                legs=[
                    Leg(target.tickets_account_id, -Money(t.value, currency)),
                    Leg(
                        accounts[t.player_id]
                        if refund and t.source == Ticket.Source.SATELLITE
                        else promotions_account_id(currency),
                        Money(t.value, currency),
                    ),
                ],
                memo=f"ticket {t.pk} to tournament {target.slug}: {to}",
            )
            for t in tickets
        ]
    )
    Ticket.objects.filter(pk__in=[t.pk for t in tickets]).update(
        status=Ticket.Status.REFUNDED if refund else Ticket.Status.EXPIRED,
        settled_at=timezone.now(),
    )


def _share_locked(target_id: int) -> Tournament:
    table = Tournament._meta.db_table
    return next(
        iter(Tournament.objects.raw(f"SELECT * FROM {table} WHERE id = %s FOR SHARE", [target_id]))
    )


def promotions_account_id(currency: str) -> int:
    """Where promotions' money comes from and goes back to: promotions (chips: chips issuance)."""
    sink = PlatformAccount.CHIPS_ISSUANCE if currency == CHIPS else PlatformAccount.PROMOTIONS
    return platform_accounts()[sink].pk


def seat_value(satellite: Tournament) -> Decimal:
    """A seat's value: its target's entry fee (0 for a tournament paying no seats)."""
    fees = satellite.prizes.filter(target__isnull=False).values_list("target__entry_fee", flat=True)
    return next(iter(fees), Decimal("0.00"))


def seat_target(satellite: Tournament) -> Tournament | None:
    """The satellite's target, share-locked, while it still takes tickets (registering); None
    when it has started or been cancelled (its winners then get the seat's value in money)."""
    target_id = satellite.prizes.filter(target__isnull=False).values_list("target_id", flat=True)
    table = Tournament._meta.db_table
    target = next(
        iter(
            Tournament.objects.raw(
                f"SELECT * FROM {table} WHERE id = ANY(%s) FOR SHARE", [list(target_id)]
            )
        ),
        None,
    )
    if target is None or target.status != Tournament.Status.REGISTERING:
        return None
    return target


def seat_payees(target: Tournament | None, winners: list[Registration]) -> set[int]:
    """Which of the seat winners (registrations) get a ticket: not those who hold one for the
    target already or are registered in it (they get its value in money)."""
    if target is None:
        return set()
    free = seat_payees_of(target, [r.player for r in winners])
    return {r.pk for r in winners if r.player_id in free}


def seat_payees_of(target: Tournament, players: list[Player]) -> set[int]:
    """The players (pks) who may take a ticket for the target: holding none, not registered."""
    players = [p.pk for p in players]
    taken = set(
        Ticket.objects.filter(tournament=target, player_id__in=players, status__in=HELD)
        .values_list("player_id", flat=True)
        .union(
            Registration.objects.filter(
                tournament=target, player_id__in=players, status=Registration.Status.REGISTERED
            ).values_list("player_id", flat=True)
        )
    )
    return {pk for pk in players if pk not in taken}


def tickets_won(satellite: Tournament, target: Tournament, winners: list[Registration]) -> None:
    Ticket.objects.bulk_create(
        Ticket(
            tournament=target,
            player_id=r.player_id,
            value=r.prize,
            source=Ticket.Source.SATELLITE,
            won_in=satellite,
        )
        for r in winners
    )


def tickets_outstanding(currency: str) -> tuple[Decimal, Decimal]:
    """(in the tickets accounts, active tickets' value) in a currency: always equal."""
    accounts = Account.objects.filter(
        pk__in=Tournament.objects.filter(currency=currency).values("tickets_account_id")
    )
    books = sum((a.balance.amount for a in accounts), Decimal("0.00"))
    active = sum(
        Ticket.objects.filter(
            Q(tournament__currency=currency), status=Ticket.Status.ACTIVE
        ).values_list("value", flat=True),
        Decimal("0.00"),
    )
    return books, active


# --- tickets issued by finance -----------------------------------------------------------------

MAX_ISSUED = 500  # players in one proposal


def ticket_issue_checked(*, tournament: Tournament, players: Any, expires_at: Any) -> list[Player]:
    """The players a proposal may issue tickets to: external ids of players, each once, at most
    MAX_ISSUED, none holding a ticket for the tournament or registered in it; the tournament
    registering; the expiry to come, at the latest when its registration closes."""
    if (
        not isinstance(players, list)
        or not 1 <= len(players) <= MAX_ISSUED
        or not all(isinstance(p, str) for p in players)
        or len(set(players)) != len(players)
    ):
        raise ProposalInvalid(
            f"1 to {MAX_ISSUED} players' external ids, each once",
            details={"field": "players"},
        )
    if (
        tournament.status != Tournament.Status.REGISTERING
        or timezone.now() >= tournament.registration_closes_at
    ):
        raise ProposalInvalid(
            f"{tournament.slug!r} is not registering: no tickets for it",
            details={"field": "tournament"},
        )
    if not isinstance(expires_at, datetime) or not (
        timezone.now() < expires_at <= tournament.registration_closes_at
    ):
        raise ProposalInvalid(
            "the tickets' expiry is to come, at the latest when the tournament's registration "
            f"closes ({ist(tournament.registration_closes_at)})",
            details={"field": "expires_at"},
        )
    found = list(Player.objects.filter(external_id__in=players).order_by("pk"))
    if unknown := set(players) - {p.external_id for p in found}:
        raise ProposalInvalid(
            f"no such players: {', '.join(sorted(unknown))}", details={"field": "players"}
        )
    holding = [p for p in found if p.pk not in seat_payees_of(tournament, found)]
    if holding:
        names = ", ".join(p.external_id for p in holding)
        raise ProposalInvalid(
            f"these hold a ticket for {tournament.slug!r} or are registered: {names}",
            details={"field": "players"},
        )
    return found


def ticket_issue_propose(
    *,
    proposed_by: AbstractBaseUser,
    tournament: Tournament,
    players: Any,
    expires_at: Any,
    reason: str,
) -> TicketIssue:
    permission_required(proposed_by, "tournaments.add_ticketissue")
    ticket_issue_checked(tournament=tournament, players=players, expires_at=expires_at)
    return TicketIssue.objects.create(
        tournament=tournament,
        players=players,
        expires_at=expires_at,
        reason=reason_required(reason, "tickets issued"),
        proposed_by=proposed_by,
    )


def ticket_issue_apply(issue: TicketIssue) -> None:
    """What approving does (inside the decision's transaction): checked again under the
    tournament's share lock, then each ticket's value from promotions into its tickets account
    (one ledger call) and the tickets."""
    tournament = _share_locked(issue.tournament_id)
    players = ticket_issue_checked(
        tournament=tournament, players=issue.players, expires_at=issue.expires_at
    )
    value, currency = tournament.entry_fee, tournament.currency
    if value <= 0:
        raise ProposalInvalid(f"{tournament.slug!r} is a freeroll: no ticket to issue")
    transfers_post(
        requests=[
            TransferRequest(
                kind=Transfer.Kind.BONUS,
                reference=tournament_reference(tournament.pk),
                idempotency_key=tournament_key(tournament.pk, "issue", issue.pk, p.pk),
                legs=[
                    Leg(promotions_account_id(currency), -Money(value, currency)),
                    Leg(tournament.tickets_account_id, Money(value, currency)),
                ],
                memo=f"ticket to tournament {tournament.slug} for {p.external_id}: {issue}",
            )
            for p in players
        ]
    )
    Ticket.objects.bulk_create(
        Ticket(
            tournament=tournament,
            player=p,
            value=value,
            source=Ticket.Source.FINANCE,
            issue=issue,
            expires_at=issue.expires_at,
        )
        for p in players
    )
