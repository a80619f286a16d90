"""Input serializers (shape only; the services judge the content) and output representations."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from tournaments import rummy
from tournaments.models import Deal, Game, GameTemplate
from tournaments.services.escrow import contributions
from tournaments.services.terms import template_ruleset


class GameOpenIn(serializers.Serializer):
    game_id = serializers.CharField(max_length=64)
    template = serializers.SlugField(max_length=64)
    players = serializers.ListField(
        child=serializers.CharField(max_length=64), min_length=2, max_length=6
    )


class ResultIn(serializers.Serializer):
    player = serializers.CharField(max_length=64)
    outcome = serializers.ChoiceField(choices=rummy.OUTCOMES, required=False, allow_null=True)
    groups = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField(max_length=12)),
        required=False,
        allow_null=True,
    )
    melded = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField(max_length=12)), required=False
    )
    laid_off = serializers.ListField(child=serializers.JSONField(), required=False)
    in_hand = serializers.ListField(child=serializers.CharField(max_length=12), required=False)
    claimed_points = serializers.IntegerField(required=False, allow_null=True)


class DealIn(serializers.Serializer):
    deal_no = serializers.IntegerField(min_value=1)
    wild_joker = serializers.CharField(max_length=8, required=False, allow_blank=True)
    results = serializers.ListField(child=ResultIn(), min_length=1, max_length=6)


class RejoinIn(serializers.Serializer):
    player = serializers.CharField(max_length=64)


def _amount(value) -> str | None:
    return None if value is None else f"{value:.2f}"


def template_out(template: GameTemplate) -> dict[str, Any]:
    return {
        "slug": template.slug,
        "format": template.format,
        "currency": template.currency,
        "seats": template.seats,
        "point_value": _amount(template.point_value),
        "entry_fee": _amount(template.entry_fee),
        "fee_percent": _amount(template.fee_percent),
        "deals": template.deals,
        "rules": template_ruleset(template).to_dict(),
        "split_policy": template.split_policy,
        "rejoin_allowed": template.rejoin_allowed,
        "entry_buckets": template.entry_buckets,
    }


def deal_out(deal: Deal) -> dict[str, Any]:
    return {
        "deal_no": deal.deal_no,
        "status": deal.status,
        "wild_joker": deal.wild_joker or None,
        "results": deal.results,
        "points": deal.points,
        "discrepancies": deal.discrepancies,
        "settled_at": deal.settled_at.isoformat() if deal.settled_at else None,
        "transfers": deal.transfers,
    }


def game_out(game: Game) -> dict[str, Any]:
    seats = list(game.players.select_related("player").order_by("seat"))
    deals = list(game.deals.order_by("deal_no"))
    return {
        "game_id": game.game_id,
        "template": game.terms["template"],
        "format": game.format,
        "currency": game.currency,
        "status": game.status,
        "outcome": game.outcome or None,
        "terms": game.terms,
        "deals_played": game.deals_played,
        "settled": all(d.status == Deal.Status.SETTLED for d in deals),
        "collected": _amount(game.collected),
        "paid_out": _amount(game.paid_out),
        "refunded": _amount(game.refunded),
        "fee": _amount(game.fee),
        "players": [
            {
                "player": s.player.external_id,
                "seat": s.seat,
                "score": s.score,
                "eliminated": s.eliminated,
                "rejoins": s.rejoins,
                "entries": s.entries,
                "paid_in": {b: f"{a:.2f}" for b, a in contributions(s)},
                "payout": _amount(s.payout),
                "refund": _amount(s.refund),
            }
            for s in seats
        ],
        "deals": [deal_out(d) for d in deals],
    }
