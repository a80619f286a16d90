"""Tournaments: registration into escrow, rounds of table standings, prizes at the final.

Registrations never queue on one row: they hold the tournament row `FOR SHARE` (start, cancel,
a round's results take it `FOR UPDATE`, so those wait for them and they for those), claim a free
`TournamentSeat` with `SKIP LOCKED` (full = no free seat), and pay into one of the tournament's
escrow shards (`TournamentEscrow`, by seat number). The ledger holds the money; these rows say
why it moved. `collected` and the other figures are stored when the tournament ends; until then
they are the sums of the registrations (`tournaments.tournaments.services.rounds`).
"""

from decimal import Decimal

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from rummy_ledger.api.models import ApiClient
from wallets.models import CASH, CHIPS, Account, Player, Proposal

ZERO = Decimal("0.00")


class Tournament(models.Model):
    class Status(models.TextChoices):
        REGISTERING = "registering"
        RUNNING = "running"
        FINISHED = "finished"
        CANCELLED = "cancelled"

    client = models.ForeignKey(ApiClient, on_delete=models.PROTECT, related_name="tournaments")
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=120)
    currency = models.CharField(
        max_length=3, choices=[(CASH, "Cash (INR)"), (CHIPS, "Practice chips")]
    )
    entry_fee = models.DecimalField(max_digits=12, decimal_places=2, help_text="0: a freeroll")
    fee_percent = models.DecimalField(
        max_digits=5, decimal_places=2, help_text="The platform's fee on entries and rebuys."
    )
    guarantee = models.DecimalField(
        max_digits=14, decimal_places=2, help_text="The smallest prize pool; 0: none."
    )
    min_players = models.PositiveIntegerField()
    max_players = models.PositiveIntegerField()
    table_size = models.PositiveSmallIntegerField(
        validators=[MinValueValidator(2), MaxValueValidator(6)]
    )
    registration_closes_at = models.DateTimeField()
    bonus_cap_percent = models.DecimalField(max_digits=5, decimal_places=2)
    rounds = models.JSONField(help_text='[{"qualify_top": 2}, ..., {"final": true}]')
    rebuy = models.JSONField(null=True, blank=True, help_text="price, max_per_player, until_round")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.REGISTERING)
    round = models.PositiveSmallIntegerField(null=True, blank=True, help_text="The current one.")
    tickets_unused = models.CharField(
        max_length=8,
        choices=[("refund", "refund"), ("lapse", "lapse")],
        default="refund",
        help_text="What the start does with a ticket for it nobody used: its value back, or lapse.",
    )
    # the tickets for this tournament outstanding: their value, held until used or settled
    tickets_account = models.OneToOneField(
        Account, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # stored when the tournament ends (finished: prizes paid; cancelled: refunds)
    collected = models.DecimalField(max_digits=16, decimal_places=2, default=ZERO)
    fee = models.DecimalField(max_digits=16, decimal_places=2, default=ZERO)
    overlay = models.DecimalField(max_digits=16, decimal_places=2, default=ZERO)
    prizes_paid = models.DecimalField(max_digits=16, decimal_places=2, default=ZERO)
    refunded = models.DecimalField(max_digits=16, decimal_places=2, default=ZERO)
    created_by = models.CharField(max_length=150, help_text="Who scheduled it.")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["registration_closes_at", "slug"]
        constraints = [
            models.CheckConstraint(
                condition=Q(currency=CASH) | Q(fee_percent=0), name="tournament_chips_no_fee"
            ),
            models.CheckConstraint(
                condition=Q(table_size__gte=2, table_size__lte=6), name="tournament_table_size"
            ),
            models.CheckConstraint(
                condition=Q(min_players__gte=2, max_players__gte=models.F("min_players")),
                name="tournament_players_range",
            ),
            models.CheckConstraint(
                condition=Q(entry_fee__gte=0, guarantee__gte=0, fee_percent__gte=0)
                & Q(fee_percent__lt=100),
                name="tournament_amounts_not_negative",
            ),
            models.CheckConstraint(
                condition=~Q(status="finished")
                | Q(prizes_paid=models.F("collected") + models.F("overlay") - models.F("fee")),
                name="tournament_finished_balances",
            ),
        ]
        indexes = [models.Index(fields=["client", "status"], name="tournament_client_status")]

    def __str__(self) -> str:
        return self.slug


class TournamentPrize(models.Model):
    """A prize table row: each of ranks `rank_from`..`rank_to` gets `percent` % of the pool
    (money), or a ticket to the `target` tournament (a satellite's seats: no percent)."""

    class Kind(models.TextChoices):
        MONEY = "money"
        TICKET = "ticket"

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="prizes")
    rank_from = models.PositiveIntegerField()
    rank_to = models.PositiveIntegerField()
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.MONEY)
    percent = models.DecimalField(max_digits=5, decimal_places=2, null=True, blank=True)
    target = models.ForeignKey(
        Tournament, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        ordering = ["tournament", "rank_from"]
        constraints = [
            models.UniqueConstraint(
                fields=["tournament", "rank_from"], name="tournament_prize_unique_rank"
            ),
            models.CheckConstraint(
                condition=Q(rank_from__gte=1, rank_to__gte=models.F("rank_from")),
                name="tournament_prize_ranks",
            ),
            models.CheckConstraint(
                # NULL > 0 is not false: a money row's percent is not null, said so
                condition=Q(kind="money", percent__isnull=False, percent__gt=0, target__isnull=True)
                | Q(kind="ticket", percent__isnull=True, target__isnull=False),
                name="tournament_prize_kind",
            ),
        ]

    def __str__(self) -> str:
        what = f"{self.percent}%" if self.kind == self.Kind.MONEY else f"ticket {self.target_id}"
        return f"{self.tournament_id}: {self.rank_from}-{self.rank_to} {what}"


class TournamentEscrow(models.Model):
    """One of a tournament's escrow accounts: registrations pay into the one of their seat
    number's shard, so no single account row is locked by every registration."""

    tournament = models.ForeignKey(Tournament, on_delete=models.PROTECT, related_name="escrows")
    shard = models.PositiveSmallIntegerField()
    account = models.OneToOneField(Account, on_delete=models.PROTECT, related_name="+")

    class Meta:
        ordering = ["tournament", "shard"]
        constraints = [
            models.UniqueConstraint(fields=["tournament", "shard"], name="tournament_escrow_shard")
        ]

    def __str__(self) -> str:
        return f"{self.tournament_id}#{self.shard}"


class Registration(models.Model):
    """A player's entry: what it paid by bucket (entry and rebuys, in the order charged), its
    progress through the rounds, its rank and prize. Rows are kept when a player unregisters."""

    class Status(models.TextChoices):
        REGISTERED = "registered"
        UNREGISTERED = "unregistered"  # refunded before the start
        REFUNDED = "refunded"  # the tournament was cancelled

    tournament = models.ForeignKey(
        Tournament, on_delete=models.PROTECT, related_name="registrations"
    )
    player = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="registrations")
    escrow = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="+")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.REGISTERED)
    paid = models.JSONField(default=list, help_text="[[bucket, amount], ...] in the order charged.")
    entry = models.DecimalField(max_digits=14, decimal_places=2)
    rebuys = models.PositiveSmallIntegerField(default=0)
    rebuy_total = models.DecimalField(max_digits=14, decimal_places=2, default=ZERO)
    out_round = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Knocked out.")
    out_chips = models.BigIntegerField(null=True, blank=True)
    final_position = models.PositiveSmallIntegerField(null=True, blank=True)
    rank = models.PositiveIntegerField(null=True, blank=True)
    prize = models.DecimalField(max_digits=16, decimal_places=2, null=True, blank=True)
    refund = models.DecimalField(max_digits=14, decimal_places=2, default=ZERO)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["tournament", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["tournament", "player"],
                condition=Q(status="registered"),
                name="registration_once_per_player",
            )
        ]

    def __str__(self) -> str:
        return f"{self.tournament_id}:{self.player_id}"

    @property
    def paid_total(self) -> Decimal:
        return self.entry + self.rebuy_total


class Ticket(models.Model):
    """A player's right to enter one tournament (`tournament`, the target), worth its entry fee
    in its currency, neither cashable nor transferable. Its value sits in the target's tickets
    account (`Tournament.tickets_account`) while `active`; `used` moves it into the escrow with
    the registration, unregistering moves it back (`active`). The target's start settles the
    unused ones by its `tickets_unused` term (`refunded` or `expired`); a cancelled target
    refunds every one (`refunded`). `won_in`: the satellite that paid it."""

    class Status(models.TextChoices):
        ACTIVE = "active"
        USED = "used"
        REFUNDED = "refunded"
        EXPIRED = "expired"

    class Source(models.TextChoices):
        SATELLITE = "satellite"
        FINANCE = "finance"  # issued from promotions (`TicketIssue`)
        LEADERBOARD = "leaderboard"  # a leaderboard's prize, from promotions

    tournament = models.ForeignKey(Tournament, on_delete=models.PROTECT, related_name="tickets")
    player = models.ForeignKey(Player, on_delete=models.PROTECT, related_name="tickets")
    value = models.DecimalField(max_digits=12, decimal_places=2)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.ACTIVE)
    source = models.CharField(max_length=16, choices=Source.choices)
    won_in = models.ForeignKey(
        Tournament, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    issue = models.ForeignKey(
        "TicketIssue", null=True, blank=True, on_delete=models.PROTECT, related_name="tickets"
    )
    leaderboard = models.ForeignKey(
        "Leaderboard", null=True, blank=True, on_delete=models.PROTECT, related_name="tickets"
    )
    registration = models.OneToOneField(
        Registration, null=True, blank=True, on_delete=models.PROTECT, related_name="ticket"
    )
    # A finance ticket's own expiry (its issue's); a satellite's lasts until the target's
    # registration closes (null). Past it, the ticket enters nothing and beat expires it.
    expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    settled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["pk"]
        constraints = [
            models.CheckConstraint(condition=Q(value__gt=0), name="ticket_value_positive"),
            models.CheckConstraint(
                condition=Q(source__in=["satellite", "leaderboard"], expires_at__isnull=True)
                | Q(source="finance", expires_at__isnull=False),
                name="ticket_expiry_by_source",
            ),
            models.CheckConstraint(
                condition=Q(status="used", registration__isnull=False)
                | (~Q(status="used") & Q(registration__isnull=True)),
                name="ticket_used_by_registration",
            ),
            models.CheckConstraint(
                condition=Q(
                    source="satellite",
                    won_in__isnull=False,
                    issue__isnull=True,
                    leaderboard__isnull=True,
                )
                | Q(source="finance", won_in__isnull=True, issue__isnull=False, leaderboard=None)
                | Q(
                    source="leaderboard",
                    won_in__isnull=True,
                    issue__isnull=True,
                    leaderboard__isnull=False,
                ),
                name="ticket_source",
            ),
            models.UniqueConstraint(
                fields=["tournament", "player"],
                condition=Q(status__in=["active", "used"]),
                name="ticket_one_per_player",
            ),
        ]
        indexes = [
            models.Index(fields=["player", "tournament"], name="ticket_player"),
            models.Index(
                fields=["expires_at"],
                condition=Q(status="active", expires_at__isnull=False),
                name="ticket_active_expiry",
            ),
        ]

    def __str__(self) -> str:
        return f"ticket {self.pk} to {self.tournament_id} for {self.player_id}"

    @property
    def expiry(self):
        """When it stops entering its tournament: its own expiry, at the latest the target's
        registration close."""
        closes = self.tournament.registration_closes_at
        return closes if self.expires_at is None else min(self.expires_at, closes)


class TournamentSeat(models.Model):
    """The `max_players` places of a tournament, created with it: a registration takes a free
    one (`SKIP LOCKED`), an unregistration frees it."""

    tournament = models.ForeignKey(Tournament, on_delete=models.PROTECT, related_name="seats")
    number = models.PositiveIntegerField()
    registration = models.OneToOneField(
        Registration, null=True, blank=True, on_delete=models.PROTECT, related_name="seat"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tournament", "number"], name="tournament_seat_number")
        ]
        indexes = [
            models.Index(
                fields=["tournament", "number"],
                condition=Q(registration__isnull=True),
                name="tournament_seat_free",
            )
        ]

    def __str__(self) -> str:
        return f"{self.tournament_id}#{self.number}"


class Rebuy(models.Model):
    registration = models.ForeignKey(Registration, on_delete=models.PROTECT, related_name="+")
    number = models.PositiveSmallIntegerField()
    round = models.PositiveSmallIntegerField()
    amount = models.DecimalField(max_digits=14, decimal_places=2)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["registration", "number"], name="rebuy_number_once")
        ]

    def __str__(self) -> str:
        return f"rebuy {self.number} of {self.registration_id}"


class TournamentRound(models.Model):
    """A round's posted standings; `settled` once its task ran (the final's pays the prizes)."""

    class Status(models.TextChoices):
        STORED = "stored"
        SETTLED = "settled"

    tournament = models.ForeignKey(Tournament, on_delete=models.PROTECT, related_name="results")
    number = models.PositiveSmallIntegerField()
    tables = models.JSONField(help_text="The posted tables and standings.")
    payload_hash = models.CharField(max_length=64)
    entrants = models.PositiveIntegerField()
    qualified = models.PositiveIntegerField()
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.STORED)
    created_at = models.DateTimeField(auto_now_add=True)
    settled_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["tournament", "number"]
        constraints = [
            models.UniqueConstraint(fields=["tournament", "number"], name="tournament_round_once")
        ]
        indexes = [
            models.Index(
                fields=["created_at"], condition=Q(status="stored"), name="tournament_round_stored"
            )
        ]

    def __str__(self) -> str:
        return f"{self.tournament_id} round {self.number}"


class TournamentChange(Proposal):
    """New money terms for a tournament (entry fee, fee %, guarantee, rebuy, prize table),
    proposed by one member of finance staff and applied when another approves it, while nobody
    has registered yet. `previous` holds the terms the proposer saw: an approval that would
    overwrite a change made in between is refused. The rows are the terms' history."""

    approve_permission = "tournaments.approve_tournamentchange"

    tournament = models.ForeignKey(Tournament, on_delete=models.PROTECT, related_name="changes")
    entry_fee = models.DecimalField(max_digits=12, decimal_places=2)
    fee_percent = models.DecimalField(max_digits=5, decimal_places=2)
    guarantee = models.DecimalField(max_digits=14, decimal_places=2)
    rebuy = models.JSONField(null=True, blank=True)
    prizes = models.JSONField(help_text='[{"ranks": "1", "percent": "40.00"}, ...]')
    previous = models.JSONField(help_text="The money terms when proposed.")

    class Meta(Proposal.Meta):
        permissions = [
            (
                "approve_tournamentchange",
                "Can approve or reject changes of tournaments' money terms",
            )
        ]

    def __str__(self) -> str:
        return f"change #{self.pk} of {self.tournament}"


class NewTournament(Proposal):
    """A tournament finance proposes in admin: `spec` holds its fields under the names of
    `manage.py create_tournament`'s file and is checked as that file is; the tournament is
    created (`tournament`) only when another member of staff approves, so its first money
    terms are maker-checked like every later change."""

    approve_permission = "tournaments.approve_newtournament"

    slug = models.SlugField(max_length=64)
    spec = models.JSONField(help_text="The tournament's fields, as create_tournament's file.")
    tournament = models.OneToOneField(
        Tournament, null=True, blank=True, on_delete=models.PROTECT, related_name="proposal"
    )

    class Meta(Proposal.Meta):
        verbose_name = "new tournament"
        permissions = [("approve_newtournament", "Can approve or reject new tournaments")]

    def __str__(self) -> str:
        return f"new tournament #{self.pk} {self.slug}"


class TicketIssue(Proposal):
    """Tickets to `tournament` for `players` (external ids), issued by finance: proposed by one
    member of staff, issued from promotions when another approves (shown as promotions spend);
    their value goes back to promotions, never to winnings."""

    approve_permission = "tournaments.approve_ticketissue"

    tournament = models.ForeignKey(Tournament, on_delete=models.PROTECT, related_name="+")
    players = models.JSONField(help_text='["player-1", ...]: external ids, each once.')
    expires_at = models.DateTimeField(
        help_text="when the tickets expire (their value back to promotions): at the latest when "
        "the tournament's registration closes"
    )

    class Meta(Proposal.Meta):
        verbose_name = "ticket issue"
        permissions = [("approve_ticketissue", "Can approve or reject tickets issued by finance")]

    def __str__(self) -> str:
        return f"ticket issue #{self.pk} to {self.tournament}"
