"""Settlement's write-back: deals (and the transfers they posted, in order), seats and games in
ONE statement, each value named after its column. The reads of the hot path are
`tournaments/games/queries.py`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from django.db import connection

from tournaments.models import Deal, DealTransfer, Game, GamePlayer

WRITE_BACK_SQL = f"""
WITH d AS (
    UPDATE {Deal._meta.db_table} AS x
       SET points = u.points::jsonb, discrepancies = u.disc::jsonb, status = 'settled',
           settled_at = coalesce(%(settled_at)s::timestamptz, now())
      FROM unnest(%(deal_ids)s::bigint[], %(deal_points)s::text[], %(deal_discrepancies)s::text[])
           AS u(id, points, disc)
     WHERE x.id = u.id RETURNING 1),
t AS (
    INSERT INTO {DealTransfer._meta.db_table} (deal_id, transfer_id)
    SELECT u.deal, u.transfer
      FROM unnest(%(link_deals)s::bigint[], %(link_transfers)s::bigint[])
           WITH ORDINALITY AS u(deal, transfer, n)
     ORDER BY u.n RETURNING 1),
s AS (
    UPDATE {GamePlayer._meta.db_table} AS gp
       SET score = u.score, eliminated = u.eliminated, payout = u.payout, refund = u.refund
      FROM unnest(%(seat_ids)s::bigint[], %(seat_scores)s::int[], %(seat_eliminated)s::bool[],
                  %(seat_payouts)s::numeric[], %(seat_refunds)s::numeric[])
           AS u(id, score, eliminated, payout, refund)
     WHERE gp.id = u.id RETURNING 1)
UPDATE {Game._meta.db_table} AS g
   SET status = u.status, outcome = u.outcome, finished_at = u.finished_at,
       deals_played = u.deals_played, paid_out = u.paid_out, refunded = u.refunded, fee = u.fee
  FROM unnest(%(game_ids)s::bigint[], %(game_statuses)s::text[], %(game_outcomes)s::text[],
              %(game_finished_at)s::timestamptz[], %(game_deals_played)s::int[],
              %(game_paid_out)s::numeric[], %(game_refunded)s::numeric[], %(game_fees)s::numeric[])
       AS u(id, status, outcome, finished_at, deals_played, paid_out, refunded, fee)
 WHERE g.id = u.id
"""


def settlement_write_back(
    games: Sequence[Game],
    seats: Sequence[GamePlayer],
    deals: Sequence[Deal],
    deal_transfers: Sequence[tuple[int, int]],
    settled_at: datetime | None = None,
) -> None:
    """Deals (and the transfers they posted, in order), seats and games in ONE statement:
    settlement throughput is bounded by the round trips made while the locks are held. The deals
    are settled at `settled_at` (the time settlement tells in their events; the transaction's
    time when None)."""
    with connection.cursor() as cursor:
        cursor.execute(
            WRITE_BACK_SQL,
            {
                "settled_at": settled_at,
                "deal_ids": [d.pk for d in deals],
                "deal_points": [json.dumps(d.points) for d in deals],
                "deal_discrepancies": [json.dumps(d.discrepancies) for d in deals],
                "link_deals": [deal for deal, _ in deal_transfers],
                "link_transfers": [transfer for _, transfer in deal_transfers],
                "seat_ids": [s.pk for s in seats],
                "seat_scores": [s.score for s in seats],
                "seat_eliminated": [s.eliminated for s in seats],
                "seat_payouts": [s.payout for s in seats],
                "seat_refunds": [s.refund for s in seats],
                "game_ids": [g.pk for g in games],
                "game_statuses": [g.status for g in games],
                "game_outcomes": [g.outcome for g in games],
                "game_finished_at": [g.finished_at for g in games],
                "game_deals_played": [g.deals_played for g in games],
                "game_paid_out": [g.paid_out for g in games],
                "game_refunded": [g.refunded for g in games],
                "game_fees": [g.fee for g in games],
            },
        )
