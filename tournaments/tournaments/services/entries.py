"""Registering, unregistering and rebuying: a player's money into and out of a tournament's
escrow, taken like a game's entry (`escrow.entry_plans`: bucket order, the bonus cap, the lots
that expire first) and given back to the same buckets and lots (with their original expiry).

Lock order, everywhere: the tournament row (`FOR SHARE` here; start, cancel and rounds take it
`FOR UPDATE`), then a seat or the registration, then bonus lots, then the ledger's accounts.
Registrations share the tournament row and claim different seats and escrow shards, so they do
not wait for each other.

The per-client escrow cap (docs/trust-model.md, `escrow_cap_take`) counts an entry or rebuy here
as it counts a game's entry: `entry_post` takes it.
"""

from __future__ import annotations

from decimal import Decimal

from django.db import IntegrityError, transaction
from django.utils import timezone
from djmoney.money import Money

from rummy_ledger.api.models import ApiClient
from tournaments.errors import GameErrorCode, TournamentNotFound, TournamentRefused
from tournaments.games.services.escrow import (
    Release,
    entry_legs,
    entry_plans,
    paid_merged,
    release_post,
    short_players,
)
from tournaments.games.services.games import cash_play_check
from tournaments.models import (
    Rebuy,
    Registration,
    Tournament,
    TournamentEscrow,
    TournamentSeat,
)
from tournaments.payouts import ZERO, refund_by_bucket
from tournaments.references import TOURNAMENT_REBUY, tournament_key, tournament_reference
from tournaments.tournaments.services import tickets
from tournaments.tournaments.services.setup import ESCROW_SHARDS, terms_of
from wallets.errors import InsufficientFunds
from wallets.models import Account, Bucket, Player, Transfer
from wallets.money.amounts import amount_text
from wallets.services.bonuses import BonusReturn
from wallets.services.client_guards import escrow_cap_take, players_seatable_check
from wallets.services.players import player_get_or_create
from wallets.services.transfers import Leg, TransferRequest, transfers_post

Status = Tournament.Status


def tournament_get(*, client: ApiClient, slug: str, lock: str = "") -> Tournament:
    """A tournament of this client (another client's does not exist for it: 404), read plain,
    `share`-locked (registrations, rebuys) or `update`-locked (start, cancel, rounds)."""
    tournaments = Tournament.objects.filter(client=client, slug=slug)
    if lock == "update":
        tournaments = tournaments.select_for_update()
    elif lock == "share":
        table = Tournament._meta.db_table
        tournaments = Tournament.objects.raw(
            f"SELECT * FROM {table} WHERE client_id = %s AND slug = %s FOR SHARE",
            [client.pk, slug],
        )
    tournament = next(iter(tournaments), None)
    if tournament is None:
        raise TournamentNotFound(f"no tournament {slug!r}")
    return tournament


def registered(tournament: Tournament):
    return Registration.objects.filter(tournament=tournament, status=Registration.Status.REGISTERED)


def players_count(tournament: Tournament) -> int:
    return registered(tournament).count()


def _refused(code: GameErrorCode, message: str, **details) -> TournamentRefused:
    return TournamentRefused(message, code=code, details=details)


def _registration_open(tournament: Tournament) -> None:
    if (
        tournament.status != Status.REGISTERING
        or timezone.now() >= tournament.registration_closes_at
    ):
        raise _refused(
            GameErrorCode.REGISTRATION_CLOSED,
            f"registration for {tournament.slug!r} is closed",
            status=tournament.status,
        )


def _bonus_key(registration: Registration) -> str:
    """What a registration's entry and rebuys took from bonus lots, recorded for its refund."""
    return tournament_key(registration.tournament_id, "bonus", registration.pk)


def entry_post(
    *, tournament: Tournament, registration: Registration, amount: Decimal, key: str, memo: str
) -> list[tuple[str, Decimal]]:
    """Take `amount` from the player's buckets into the registration's escrow shard; what came
    from each bucket. `insufficient_funds` names the shortfall."""
    terms = terms_of(tournament)
    player = registration.player
    escrow_cap_take(client=tournament.client, amount=amount, currency=tournament.currency)
    plans = entry_plans(
        player_ids=[player.pk],
        order=terms.entry_buckets,
        amount=amount,
        cap_percent=terms.bonus_cap_percent,
    )
    if player.pk in plans.short:
        raise _short(player, amount, plans.short[player.pk], tournament.currency)
    request = TransferRequest(
        kind=Transfer.Kind.ENTRY,
        reference=tournament_reference(tournament.pk),
        idempotency_key=key,
        legs=entry_legs(
            plans=plans,
            player_id=player.pk,
            bonus_reference=_bonus_key(registration),
            escrow_id=registration.escrow_id,
            currency=tournament.currency,
        ),
        memo=memo,
    )
    try:
        transfers_post(requests=[request])
    except InsufficientFunds as exc:
        if short_players(exc):
            raise _short(player, amount, None, tournament.currency) from exc
        raise
    return plans.plans[player.pk]


def _short(player: Player, amount: Decimal, shortfall: Decimal | None, currency: str):
    by = f", short by {amount_text(shortfall)}" if shortfall is not None else ""
    return InsufficientFunds(
        f"not enough money for {amount_text(amount)} {currency} from {player.external_id}{by}",
        details={
            "player": player.external_id,
            "amount": amount_text(amount),
            "shortfall": None if shortfall is None else amount_text(shortfall),
            "currency": currency,
        },
    )


def paid_by_bucket(registration: Registration) -> dict[str, str]:
    return {bucket: amount for bucket, amount in registration.paid}


@transaction.atomic
def registration_create(
    *, client: ApiClient, slug: str, player: str, pay_with: str = ""
) -> Registration:
    """Register a player: the entry paid with its active ticket for the tournament if it holds
    one (unless `pay_with` is "money"), otherwise taken from its buckets."""
    tournament = tournament_get(client=client, slug=slug, lock="share")
    _registration_open(tournament)
    who = player_get_or_create(external_id=player)
    cash_play_check(tournament.currency, [who])
    players_seatable_check(client=client, players=[who])
    if registered(tournament).filter(player=who).exists():
        raise _refused(GameErrorCode.ALREADY_REGISTERED, f"{player!r} is registered already")
    seat = _free_seat(tournament, who)
    if seat is None:
        raise _refused(
            GameErrorCode.TOURNAMENT_FULL,
            f"{slug!r} is full: {tournament.max_players} players",
            max_players=tournament.max_players,
        )
    escrow = TournamentEscrow.objects.get(tournament=tournament, shard=seat.number % ESCROW_SHARDS)
    try:
        with transaction.atomic():
            registration = Registration.objects.create(
                tournament=tournament,
                player=who,
                escrow_id=escrow.account_id,
                entry=tournament.entry_fee,
            )
    except IntegrityError as exc:  # the same player registering at the same moment
        raise _refused(
            GameErrorCode.ALREADY_REGISTERED, f"{player!r} is registered already"
        ) from exc
    paid_by_ticket = pay_with != "money" and tickets.ticket_take(tournament, registration)
    if tournament.entry_fee > 0 and not paid_by_ticket:
        charged = entry_post(
            tournament=tournament,
            registration=registration,
            amount=tournament.entry_fee,
            key=tournament_key(tournament.pk, "entry", registration.pk),
            memo=f"entry to tournament {slug}",
        )
        registration.paid = paid_merged(registration.paid, charged)
        registration.save(update_fields=["paid"])
    seat.registration = registration
    seat.save(update_fields=["registration"])
    return registration


def _free_seat(tournament: Tournament, player: Player) -> TournamentSeat | None:
    """A free seat, not waiting for one another registration holds: the search starts at a
    place of the player's own (claimed seats are not scanned over and over by everyone)."""
    start = player.pk * 7919 % tournament.max_players
    free = TournamentSeat.objects.filter(tournament=tournament, registration__isnull=True)
    for part in (free.filter(number__gte=start), free.filter(number__lt=start)):
        seat = part.order_by("number").select_for_update(skip_locked=True).first()
        if seat is not None:
            return seat
    return None


def refunds_release(tournament: Tournament, registrations: list[Registration]) -> Release:
    """Everything each registration paid, back to the buckets it came from (one transfer each),
    and what goes back into bonus lots: a `Release`, posted by `escrow.release_post` as a
    game's is."""
    release = Release()
    accounts = _player_accounts(registrations)
    for registration in registrations:
        total = registration.paid_total
        registration.refund = total
        if total <= 0:
            continue
        paid = [(bucket, Decimal(amount)) for bucket, amount in registration.paid]
        back = refund_by_bucket(paid, total, rounded_down=Bucket.BONUS)
        accounts[(registration.player_id, tickets.TICKET_BUCKET)] = tournament.tickets_account_id
        legs = [
            Leg(accounts[(registration.player_id, b)], Money(a, tournament.currency))
            for b, a in back
        ]
        release.requests.append(
            TransferRequest(
                kind=Transfer.Kind.REFUND,
                reference=tournament_reference(tournament.pk),
                idempotency_key=tournament_key(tournament.pk, "refund", registration.pk),
                legs=[Leg(registration.escrow_id, -Money(total, tournament.currency)), *legs],
                memo=f"refund from tournament {tournament.slug}",
            )
        )
        release.bonus_returns += [
            BonusReturn(_bonus_key(registration), a) for b, a in back if b == Bucket.BONUS
        ]
    return release


def _player_accounts(registrations: list[Registration]) -> dict[tuple[int, str], int]:
    rows = Account.objects.filter(
        player_id__in=[r.player_id for r in registrations], kind=Account.Kind.PLAYER
    ).values_list("player_id", "bucket", "pk")
    return {(player_id, bucket): pk for player_id, bucket, pk in rows}


def refunds_post(tournament: Tournament, registrations: list[Registration]) -> Decimal:
    """Refund every one of `registrations` in one ledger call; the total refunded. An entry
    paid with a ticket goes back to the tickets account, the ticket active again."""
    release_post(refunds_release(tournament, registrations))
    tickets.tickets_returned(registrations)
    return sum((r.refund for r in registrations), ZERO)


@transaction.atomic
def registration_withdraw(*, client: ApiClient, slug: str, player: str) -> Registration:
    """Unregister before the start: the entry back where it came from, the seat freed."""
    tournament = tournament_get(client=client, slug=slug, lock="share")
    _registration_open(tournament)
    registration = _registration_locked(tournament, player)
    refunds_post(tournament, [registration])
    registration.status = Registration.Status.UNREGISTERED
    registration.save(update_fields=["status", "refund"])
    TournamentSeat.objects.filter(registration=registration).update(registration=None)
    return registration


def _registration_locked(tournament: Tournament, player: str) -> Registration:
    registration = (
        registered(tournament)
        .filter(player__external_id=player)
        .select_related("player")
        .select_for_update(of=("self",))
        .first()
    )
    if registration is None:
        raise _refused(GameErrorCode.NOT_REGISTERED, f"{player!r} is not registered")
    return registration


@transaction.atomic
def rebuy_create(*, client: ApiClient, slug: str, player: str) -> Registration:
    """A player still in buys again, in a round up to the rebuy's `until_round`."""
    tournament = tournament_get(client=client, slug=slug, lock="share")
    rebuy = terms_of(tournament).rebuy
    if rebuy is None:
        raise _refused(GameErrorCode.REBUY_NOT_ALLOWED, f"{slug!r} has no rebuys")
    if tournament.status != Status.RUNNING or tournament.round > rebuy.until_round:
        raise _refused(
            GameErrorCode.REBUY_CLOSED,
            f"rebuys are open while running, rounds 1 to {rebuy.until_round}",
            status=tournament.status,
            round=tournament.round,
        )
    registration = _registration_locked(tournament, player)
    if registration.out_round is not None:
        raise _refused(
            GameErrorCode.REBUY_NOT_ALLOWED,
            f"{player!r} was knocked out in round {registration.out_round}",
        )
    if registration.rebuys >= rebuy.max_per_player:
        raise _refused(
            GameErrorCode.REBUY_LIMIT,
            f"{player!r} has rebought {registration.rebuys} times, the most allowed",
            max_per_player=rebuy.max_per_player,
        )
    cash_play_check(tournament.currency, [registration.player])
    number = registration.rebuys + 1
    charged = entry_post(
        tournament=tournament,
        registration=registration,
        amount=rebuy.price,
        key=tournament_key(tournament.pk, TOURNAMENT_REBUY, registration.pk, number),
        memo=f"rebuy {number} in tournament {slug}",
    )
    Rebuy.objects.create(
        registration=registration, number=number, round=tournament.round, amount=rebuy.price
    )
    registration.paid = paid_merged(registration.paid, charged)
    registration.rebuys = number
    registration.rebuy_total += rebuy.price
    registration.save(update_fields=["paid", "rebuys", "rebuy_total"])
    return registration
