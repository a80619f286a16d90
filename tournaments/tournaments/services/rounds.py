"""Starting, cancelling, each round's standings, and the prizes at the final.

Each of these holds the tournament row `FOR UPDATE` (registrations and rebuys hold it
`FOR SHARE`), so an unregistration racing the start is either refunded before it or refused
after it, and a rebuy racing a round's results sees the round they opened. A round's results
advance the round at once; `round_settle` (run by the Celery task `settle_waiting_rounds`, which
claims stored rounds as the deals' settlement claims games: `waiting_rounds_settle`) marks it
settled and, after the final, pays every prize, the fee and the overlay in ONE ledger call (a
transfer per payee, keys `tournament:<pk>:fee` and `tournament:<pk>:prize:<registration>`, all
or none): a retry, a duplicate message or a second worker pays once (the round is re-read
under the lock, and the keys would return the first transfers).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import defaultdict
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from djmoney.money import Money

from rummy_ledger.api.models import ApiClient
from rummy_ledger.errors import Retryable
from rummy_ledger.events.event_types import EventType
from rummy_ledger.events.record import event_record
from tournaments.errors import GameErrorCode, RoundRejected, TournamentRefused
from tournaments.games.services.escrow import fee_account_id
from tournaments.games.services.settlement import Failing
from tournaments.leaderboards.services.points import tournament_points_accrue
from tournaments.models import Registration, Tournament, TournamentEscrow, TournamentRound
from tournaments.payouts import (
    ZERO,
    paid_from,
    prizes_by_player,
    rank_prizes,
    seats_of,
    ticket_winners,
    tournament_pool,
    tournament_ranks,
)
from tournaments.references import tournament_key, tournament_reference
from tournaments.tournaments.services import tickets
from tournaments.tournaments.services.entries import (
    refunds_post,
    registered,
    tournament_get,
)
from tournaments.tournaments.services.setup import terms_of
from tournaments.tournaments.terms import Standing, TournamentTerms, qualified_of
from wallets.errors import LedgerBusy
from wallets.models import CHIPS, Account, Bucket, PlatformAccount, Transfer
from wallets.services.accounts import platform_accounts
from wallets.services.transfers import Leg, TransferRequest, transfers_post

Status = Tournament.Status
logger = logging.getLogger(__name__)


def _state_refused(tournament: Tournament, action: str) -> TournamentRefused:
    return TournamentRefused(
        f"cannot {action} tournament {tournament.slug!r}: it is {tournament.status}",
        code=GameErrorCode.TOURNAMENT_STATE,
        details={"status": tournament.status},
    )


@transaction.atomic
def tournament_start(*, client: ApiClient, slug: str) -> Tournament:
    """Close registration: below `min_players` cancelled with every entry refunded, otherwise
    running with round 1's entrants the registered players."""
    tournament = tournament_get(client=client, slug=slug, lock="update")
    if tournament.status != Status.REGISTERING:
        raise _state_refused(tournament, "start")
    if registered(tournament).count() < tournament.min_players:
        _cancel(tournament)
        return tournament
    tickets.tickets_settle(tournament, refund=tournament.tickets_unused == "refund")
    tournament.status = Status.RUNNING
    tournament.round = 1
    tournament.started_at = timezone.now()
    tournament.save(update_fields=["status", "round", "started_at"])
    return tournament


@transaction.atomic
def tournament_cancel(*, client: ApiClient, slug: str) -> Tournament:
    """Every entry and rebuy back where it came from; no fee, no overlay. Not once the final's
    results are in (its prizes are being paid)."""
    tournament = tournament_get(client=client, slug=slug, lock="update")
    final_in = TournamentRound.objects.filter(
        tournament=tournament, number=len(tournament.rounds)
    ).exists()
    if tournament.status not in (Status.REGISTERING, Status.RUNNING) or final_in:
        raise _state_refused(tournament, "cancel")
    _cancel(tournament)
    return tournament


def cash_tournaments_open():
    """Cash tournaments that still hold entries in escrow (registering or running)."""
    return Tournament.objects.filter(status__in=(Status.REGISTERING, Status.RUNNING)).exclude(
        currency=CHIPS
    )


def cash_tournaments_cancel() -> int:
    """The wind-down's cancel step (`wallets.services.wind_down`), as for cash games: every cash
    tournament still open is cancelled with every entry and rebuy refunded, each in its own
    transaction; one that is busy or whose final is being paid is left to the next run (its
    prizes then reach winnings, which the wind-down refunds). Returns how many were cancelled."""
    cancelled = 0
    for tournament in cash_tournaments_open().select_related("client").order_by("pk"):
        try:
            tournament_cancel(client=tournament.client, slug=tournament.slug)
        except (LedgerBusy, TournamentRefused):
            continue
        cancelled += 1
    return cancelled


def _cancel(tournament: Tournament) -> None:
    registrations = list(registered(tournament).select_related("player"))
    refunded = refunds_post(tournament, registrations)
    tickets.tickets_settle(tournament, refund=True)
    for registration in registrations:
        registration.status = Registration.Status.REFUNDED
    Registration.objects.bulk_update(registrations, ["status", "refund"])
    tournament.collected = refunded
    tournament.refunded = refunded
    tournament.status = Status.CANCELLED
    tournament.round = None
    tournament.finished_at = timezone.now()
    tournament.save(update_fields=["collected", "refunded", "status", "round", "finished_at"])
    event_record(EventType.TOURNAMENT_CANCELLED, client_id=tournament.client_id, subject=tournament)


def _hash(tables: Any) -> str:
    return hashlib.sha256(json.dumps(tables, sort_keys=True).encode()).hexdigest()


@transaction.atomic
def round_store(
    *, client: ApiClient, slug: str, number: int, tables: list[dict[str, Any]]
) -> TournamentRound:
    """Check a round's table standings, store them and advance the round; a settlement worker
    is woken after the commit. The same round posted again with the same content replays."""
    from tournaments.tasks import settle_waiting_rounds

    tournament = tournament_get(client=client, slug=slug, lock="update")
    digest = _hash(tables)
    existing = _posted_before(tournament, number, digest)
    if existing is not None:
        return existing
    if tournament.status != Status.RUNNING or number != tournament.round:
        raise TournamentRefused(
            f"round {number} is not the current round of {slug!r}",
            code=GameErrorCode.ROUND_INVALID,
            details={"round": tournament.round, "status": tournament.status},
        )
    terms = terms_of(tournament)
    final = number == len(terms.rounds)
    entrants = {
        r.player.external_id: r
        for r in registered(tournament).filter(out_round__isnull=True).select_related("player")
    }
    standings = _standings_checked(tables, entrants, terms.table_size, final)
    qualified = _qualified_checked(terms, number, standings, final)
    _outcomes_record(standings, entrants, qualified, number=number, final=final)
    stored = TournamentRound.objects.create(
        tournament=tournament,
        number=number,
        tables=tables,
        payload_hash=digest,
        entrants=len(entrants),
        qualified=0 if final else len(qualified),
    )
    if not final:
        tournament.round = number + 1
        tournament.save(update_fields=["round"])
    settle_waiting_rounds.wake()  # sent once this transaction commits
    return stored


def _posted_before(tournament: Tournament, number: int, digest: str) -> TournamentRound | None:
    """The round as stored when it was posted before with the same content (a replay); a
    refusal when it was posted with other standings; None when it is new."""
    existing = TournamentRound.objects.filter(tournament=tournament, number=number).first()
    if existing is None or existing.payload_hash == digest:
        return existing
    raise TournamentRefused(
        f"round {number} was already posted with other standings",
        code=GameErrorCode.ROUND_EXISTS,
        details={"round": number},
    )


def _qualified_checked(
    terms: TournamentTerms, number: int, standings: list[list[Standing]], final: bool
) -> set[str]:
    """Who goes on from round `number`; before the final, refused when nobody would, or when
    more would reach the final than its one table seats."""
    qualified = qualified_of(terms.rounds[number - 1], standings)
    if not final:
        if not qualified:
            raise RoundRejected("these standings would leave nobody qualified")
        if number == len(terms.rounds) - 1 and len(qualified) > terms.table_size:
            raise RoundRejected(
                f"{len(qualified)} qualified for a final table of {terms.table_size}",
                details={"qualified": len(qualified), "table_size": terms.table_size},
            )
    return qualified


def _outcomes_record(
    standings: list[list[Standing]],
    entrants: dict[str, Registration],
    qualified: set[str],
    *,
    number: int,
    final: bool,
) -> None:
    """Write each entrant's outcome of the round in one statement: their final position, or the
    round they went out in with their chips (those who qualify are left as they are)."""
    changed = []
    for table in standings:
        for s in table:
            registration = entrants[s.player]
            if final:
                registration.final_position = s.position
            elif s.player not in qualified:
                registration.out_round, registration.out_chips = number, s.chips
            else:
                continue
            changed.append(registration)
    registrations_update(
        changed,
        {"final_position": "smallint", "out_round": "smallint", "out_chips": "bigint"},
    )


def _standings_checked(
    tables: list[dict[str, Any]], entrants: dict[str, Registration], table_size: int, final: bool
) -> list[list[Standing]]:
    if final and len(tables) != 1:
        raise RoundRejected("the final is played at one table")
    seen: set[str] = set()
    names: set[str] = set()
    out = []
    for table in tables:
        if table["table"] in names:
            raise RoundRejected(
                f"table {table['table']!r} is listed twice: each table once, by its own name",
                details={"table": table["table"]},
            )
        names.add(table["table"])
        rows = table["standings"]
        if len(rows) > table_size:
            raise RoundRejected(
                f"table {table['table']!r} seats {len(rows)}, more than {table_size}",
                details={"table": table["table"]},
            )
        if sorted(r["position"] for r in rows) != list(range(1, len(rows) + 1)):
            raise RoundRejected(
                f"the positions at table {table['table']!r} are not 1 to {len(rows)}, each once",
                details={"table": table["table"]},
            )
        for r in rows:
            if r["player"] in seen or r["player"] not in entrants:
                raise RoundRejected(
                    f"{r['player']!r} is not an entrant of this round, or is listed twice",
                    details={"player": r["player"]},
                )
            seen.add(r["player"])
        out.append([Standing(r["player"], r["position"], r["chips"]) for r in rows])
    if missing := sorted(set(entrants) - seen):
        raise RoundRejected(
            f"{len(missing)} entrants of this round are missing: {', '.join(missing[:10])}",
            details={"missing": missing[:100]},
        )
    return out


def waiting_rounds_settle() -> bool:
    """Settle stored rounds, oldest first, one a transaction (a final pays thousands of prizes),
    for at most SETTLEMENT_RUN_TRANSACTIONS: each claimed with `SKIP LOCKED`, so two workers
    never wait for each other, then settled by `round_settle`. A round whose settlement fails
    is logged, stays stored and is left alone for a while (`Failing`); the others go on. True
    when the run stopped at its bound with rounds perhaps left: the task wakes the next run."""
    for _ in range(settings.SETTLEMENT_RUN_TRANSACTIONS):
        with transaction.atomic():
            waiting = TournamentRound.objects.filter(status=TournamentRound.Status.STORED)
            waiting = waiting.exclude(pk__in=_failing.skipped()).order_by("created_at", "pk")
            claimed = waiting.select_for_update(skip_locked=True).values_list("pk", flat=True)
            round_id = claimed.first()
            if round_id is None:
                return False
            try:
                with transaction.atomic():  # a savepoint: a failure leaves nothing behind
                    round_settle(round_id=round_id)
            except Retryable:
                raise
            except Exception:
                logger.exception("settlement of round %s failed; it stays stored", round_id)
                _failing.add(round_id)
    return True


_failing = Failing()


def round_settle(*, round_id: int) -> bool:
    """Settle a stored round (after the final: pay the prizes). Safe to run any number of times:
    False when it was settled already, or when no such round is stored (a message that outlived
    its round, e.g. one whose storing transaction rolled back: nothing to settle, as for deals)."""
    with transaction.atomic():
        tournament_id = (
            TournamentRound.objects.filter(pk=round_id)
            .values_list("tournament_id", flat=True)
            .first()
        )
        if tournament_id is None:
            return False
        tournament = Tournament.objects.select_for_update().get(pk=tournament_id)
        stored = TournamentRound.objects.get(pk=round_id)
        if stored.status == TournamentRound.Status.SETTLED:
            return False
        final = stored.number == len(tournament.rounds) and tournament.status == Status.RUNNING
        if final:
            _pay(tournament)
        stored.status = TournamentRound.Status.SETTLED
        stored.settled_at = timezone.now()
        stored.save(update_fields=["status", "settled_at"])
        if final:  # told once the final is settled too, as GET /tournaments/{slug} then shows it
            event_record(
                EventType.TOURNAMENT_FINISHED, client_id=tournament.client_id, subject=tournament
            )
        return True


def _pay(tournament: Tournament) -> None:
    """Prizes, fee and overlay out of the escrow shards (and promotions or chips issuance) in
    one ledger call: a transfer per payee (the fee, each prize), each drawn from one or two
    sources (`paid_from`), every leg at most LEDGER_MAX_TRANSFER. Not one transfer of them all:
    the ledger checks a transfer's balance for each of its entries at commit, so a transfer of n
    entries costs n^2 (2,500 prizes: minutes), a batch of small ones costs n. A satellite's seat
    is paid into its target's tickets account and recorded as a ticket (`services.tickets`)
    while the target takes tickets and the winner holds none; otherwise in money. The
    leaderboards listing the tournament count it, once (`tournament_points_accrue`)."""
    terms = terms_of(tournament)
    registrations = list(registered(tournament).select_related("player"))
    collected = sum((r.paid_total for r in registrations), ZERO)
    figures = tournament_pool(
        collected=collected, fee_percent=terms.fee_percent, guarantee=terms.guarantee
    )
    target = tickets.seat_target(tournament) if terms.target else None
    prizes = rank_prizes(figures.prize_pool, terms.prizes, tickets.seat_value(tournament))
    winners, seated = _ranked(registrations, prizes, seats_of(terms.prizes))
    ticketed = tickets.seat_payees(target, seated)
    sources = _prize_sources(tournament, collected=collected, overlay=figures.overlay)
    transfers_post(
        requests=_prize_requests(
            tournament, winners, sources, fee=figures.fee, target=target, ticketed=ticketed
        )
    )
    registrations_update(registrations, {"rank": "integer", "prize": "numeric"})
    if target is not None:
        tickets.tickets_won(tournament, target, [r for r in seated if r.pk in ticketed])
    tournament.collected = collected
    tournament.fee = figures.fee
    tournament.overlay = figures.overlay
    tournament.prizes_paid = figures.prize_pool
    tournament.status = Status.FINISHED
    tournament.finished_at = timezone.now()
    tournament.save(
        update_fields=["collected", "fee", "overlay", "prizes_paid", "status", "finished_at"]
    )
    tournament_points_accrue(tournament=tournament, registrations=registrations)


def _ranked(
    registrations: list[Registration], prizes_by_rank: list[Decimal], seats: int
) -> tuple[list[Registration], list[Registration]]:
    """Rank every registration (the final table by position, then each round's knocked-out by
    chips) and set their prizes; the winners, those with a prize, in rank order, and those of
    them who won a seat (a tie across the last seat shares its value in money)."""
    by_ext = {r.player.external_id: r for r in registrations}
    knocked_out: dict[int, dict[str, int]] = defaultdict(dict)
    for r in registrations:
        if r.out_round is not None:
            knocked_out[r.out_round][r.player.external_id] = r.out_chips
    groups = tournament_ranks(
        final={ext: r.final_position for ext, r in by_ext.items() if r.final_position},
        knocked_out=knocked_out,
    )
    prizes = prizes_by_player(groups, prizes_by_rank)
    seat_winners = ticket_winners(groups, seats)
    winners = []
    for group in groups:
        for ext in group.players:
            registration = by_ext[ext]
            registration.rank, registration.prize = group.rank, prizes[ext]
            if registration.prize > 0:
                winners.append(registration)
    return winners, [r for r in winners if r.player.external_id in seat_winners]


def _prize_sources(
    tournament: Tournament, *, collected: Decimal, overlay: Decimal
) -> list[tuple[int, Decimal]]:
    """Where the prizes come from, in order: the escrow shards (which must hold what was
    collected), then promotions (chips issuance for chips) for the overlay."""
    escrows = list(
        Account.objects.filter(
            pk__in=TournamentEscrow.objects.filter(tournament=tournament).values("account_id")
        ).order_by("pk")
    )
    in_escrow = sum((escrow.balance.amount for escrow in escrows), ZERO)
    if in_escrow != collected:
        raise AssertionError(f"tournament {tournament.pk}: escrow {in_escrow} != {collected}")
    sink = (
        PlatformAccount.CHIPS_ISSUANCE
        if tournament.currency == CHIPS
        else PlatformAccount.PROMOTIONS
    )
    sources = [(e.pk, e.balance.amount) for e in escrows]
    sources.append((platform_accounts()[sink].pk, overlay))
    return sources


def _prize_requests(
    tournament: Tournament,
    winners: list[Registration],
    sources: list[tuple[int, Decimal]],
    *,
    fee: Decimal,
    target: Tournament | None,
    ticketed: set[int],
) -> list[TransferRequest]:
    """A transfer per payee (the fee, then each prize), each drawn from `sources` in turn; a
    seat won as a ticket (`ticketed` registrations) is paid into the target's tickets account."""
    currency = tournament.currency
    bucket = Bucket.CHIPS if currency == CHIPS else Bucket.WINNINGS
    accounts = dict(
        Account.objects.filter(
            player_id__in=[r.player_id for r in winners], bucket=bucket
        ).values_list("player_id", "pk")
    )
    payees = [(fee_account_id(), fee, ("fee",), "fee")] + [
        (
            target.tickets_account_id if r.pk in ticketed else accounts[r.player_id],
            r.prize,
            ("prize", r.pk),
            f"rank {r.rank} {'ticket to ' + target.slug if r.pk in ticketed else 'prize'}",
        )
        for r in winners
    ]
    return [
        TransferRequest(
            kind=Transfer.Kind.SETTLEMENT,
            reference=tournament_reference(tournament.pk),
            idempotency_key=tournament_key(tournament.pk, *key),
            legs=[
                *(leg for source, part in parts for leg in split_legs(source, -part, currency)),
                *split_legs(account, amount, currency),
            ],
            memo=f"{what} of tournament {tournament.slug}",
        )
        for (account, amount, key, what), parts in zip(
            payees, paid_from(sources, [amount for _, amount, _, _ in payees]), strict=True
        )
        if amount > 0
    ]


def registrations_update(registrations: list[Registration], columns: dict[str, str]) -> None:
    """Write these columns (name -> SQL type) of many registrations in ONE statement (Django's
    `bulk_update` builds a CASE per column and row: seconds for a few thousand rows)."""
    if not registrations:
        return
    table = Registration._meta.db_table
    names = list(columns)
    sets = ", ".join(f"{name} = u.{name}" for name in names)
    arrays = ", ".join(f"%s::{columns[name]}[]" for name in names)
    sql = (
        f"UPDATE {table} r SET {sets} FROM unnest(%s::bigint[], {arrays}) "
        f"AS u(id, {', '.join(names)}) WHERE r.id = u.id"
    )
    params = [[r.pk for r in registrations]]
    params += [[getattr(r, name) for r in registrations] for name in names]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def split_legs(account_id: int, amount: Decimal, currency: str) -> list[Leg]:
    """`amount` into `account_id` (negative: out of it) as legs of at most LEDGER_MAX_TRANSFER;
    none for zero."""
    most = settings.LEDGER_MAX_TRANSFER
    sign = -1 if amount < 0 else 1
    left = abs(amount)
    legs = []
    while left > 0:
        part = min(left, most)
        legs.append(Leg(account_id, Money(sign * part, currency)))
        left -= part
    return legs
