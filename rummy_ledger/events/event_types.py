"""The event types: what each reports, and the scope of the clients it concerns."""

from django.db import models


class EventType(models.TextChoices):
    DEAL_SETTLED = "deal.settled"
    GAME_CLOSED = "game.closed"
    GAME_CANCELLED = "game.cancelled"
    DEPOSIT_CREDITED = "deposit.credited"
    WITHDRAWAL_REQUESTED = "withdrawal.requested"
    WITHDRAWAL_APPROVED = "withdrawal.approved"
    WITHDRAWAL_REJECTED = "withdrawal.rejected"
    WITHDRAWAL_PAID = "withdrawal.paid"
    WITHDRAWAL_FAILED = "withdrawal.failed"
    TOURNAMENT_FINISHED = "tournament.finished"
    TOURNAMENT_CANCELLED = "tournament.cancelled"


WITHDRAWAL_EVENTS = (
    EventType.WITHDRAWAL_REQUESTED,
    EventType.WITHDRAWAL_APPROVED,
    EventType.WITHDRAWAL_REJECTED,
    EventType.WITHDRAWAL_PAID,
    EventType.WITHDRAWAL_FAILED,
)
