"""Input serializers (shape only; the services judge the content), the output representations
(plain dicts: the hot paths build them directly), and output serializers that document those
representations in OpenAPI (a test checks real responses against them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from rummy_ledger.api.fields import (
    ExternalIdField,
    StrictCharField,
    StrictIntegerField,
    StrictSerializer,
    StrictSlugField,
)
from rummy_ledger.api.paging import NEXT, PageQuery
from tournaments import rummy
from tournaments.games.services.escrow import contributions
from tournaments.games.services.settlement import DealSettled, GameClosed
from tournaments.models import SEATS_MAX, Deal, Format, Game, GamePlayer, GameTemplate
from wallets.models import CHIPS
from wallets.money.amounts import amount_text
from wallets.services.real_money import real_money_here

# --- input: bounded by what the game allows ------------------------------------------------------

HAND_WITH_DRAW = 14  # a 13-card hand, plus the card drawn before a show
# Rummy 500 deals one or two decks of 54 (two printed jokers each): no player can show more.
RUMMY500_CARDS = 108
LONGEST_MELD = 13  # a sequence from ace to king (an ace is low or high, never both)
MAX_DEALS = 10_000
MAX_POINTS = 10_000


def card_field(**kwargs) -> StrictCharField:
    """One card token: `10H`, `T♠`, `PJ`; Rummy 500 names a joker: `PJ=10H`."""
    return StrictCharField(max_length=8, **kwargs)


def cards_field(*, max_length: int, **kwargs) -> serializers.ListField:
    return serializers.ListField(child=card_field(), max_length=max_length, **kwargs)


class GroupsField(serializers.ListField):
    """A 13-card hand in groups: at most 14 cards in all (13, or 14 with the drawn card)."""

    def __init__(self, **kwargs):
        super().__init__(
            child=cards_field(max_length=HAND_WITH_DRAW), max_length=HAND_WITH_DRAW, **kwargs
        )

    def to_internal_value(self, data):
        groups = super().to_internal_value(data)
        cards = sum(len(g) for g in groups)
        if cards > HAND_WITH_DRAW:
            raise serializers.ValidationError(
                f"a hand holds at most {HAND_WITH_DRAW} cards, got {cards}"
            )
        return groups


class GameOpenIn(StrictSerializer):
    game_id = ExternalIdField()
    template = StrictSlugField(max_length=64, help_text="A template's slug (`GET /templates`).")
    players = serializers.ListField(
        child=ExternalIdField(),
        min_length=2,
        max_length=SEATS_MAX,
        help_text="2 to the template's seats (13-card formats seat up to 6, Rummy 500 up to 8).",
    )


@extend_schema_field(
    {
        "oneOf": [
            {"type": "string", "minLength": 1, "maxLength": 8},
            {
                "type": "array",
                "minItems": 2,
                "maxItems": 2,
                "description": "[card, [the meld it extends, as it was]]",
                "items": {
                    "oneOf": [
                        {"type": "string", "minLength": 1, "maxLength": 8},
                        {
                            "type": "array",
                            "minItems": 3,
                            "maxItems": LONGEST_MELD,
                            "items": {"type": "string", "minLength": 1, "maxLength": 8},
                        },
                    ]
                },
            },
        ]
    }
)
class LaidOffField(serializers.Field):
    """Rummy 500: a card laid off on a meld, alone or with the meld it extends:
    `"5H"` or `["5H", ["2H", "3H", "4H"]]`."""

    default_error_messages = {
        "shape": "a laid-off card is a card, or [card, [the meld it extends: 3 to {n} cards]]",
    }

    def to_internal_value(self, data):
        card, meld = card_field(), cards_field(min_length=3, max_length=LONGEST_MELD)
        if isinstance(data, str):
            return card.run_validation(data)
        if not isinstance(data, list) or len(data) != 2 or not isinstance(data[1], list):
            self.fail("shape", n=LONGEST_MELD)
        return [card.run_validation(data[0]), meld.run_validation(data[1])]

    def to_representation(self, value):
        return value


class ResultIn(StrictSerializer):
    """One player's result. 13-card formats send `groups`; Rummy 500 sends `melded`, `laid_off`
    and `in_hand` (a format refuses the other's fields)."""

    player = ExternalIdField()
    outcome = serializers.ChoiceField(
        choices=rummy.OUTCOMES,
        required=False,
        allow_null=True,
        help_text="13-card formats. The deal's one winner is `declared`; a wrong show, drop, "
        "timeout, leaving or auto-play puts a player out of the deal.",
    )
    groups = GroupsField(
        required=False,
        allow_null=True,
        help_text="The player's 13 cards as grouped. Required for `lost`; the winner sends them "
        "unless every other player is out of the deal (then it wins without a show).",
    )
    melded = serializers.ListField(
        child=cards_field(max_length=LONGEST_MELD),
        max_length=RUMMY500_CARDS // 3,
        required=False,
        help_text="Rummy 500: the melds the player laid down.",
    )
    laid_off = serializers.ListField(
        child=LaidOffField(),
        max_length=RUMMY500_CARDS,
        required=False,
        help_text="Rummy 500: cards laid off on melds.",
    )
    in_hand = cards_field(
        max_length=RUMMY500_CARDS,
        required=False,
        help_text="Rummy 500: the cards left in the hand.",
    )
    claimed_points = StrictIntegerField(
        required=False,
        allow_null=True,
        min_value=-MAX_POINTS,
        max_value=MAX_POINTS,
        help_text="The game server's count; where the engine's differs, the engine's is settled "
        "and the difference recorded for finance.",
    )

    def validate(self, data):
        shown = sum(len(m) for m in data.get("melded", [])) + len(data.get("in_hand", []))
        shown += len(data.get("laid_off", []))
        if shown > RUMMY500_CARDS:
            raise serializers.ValidationError(
                {"melded": f"a player shows at most {RUMMY500_CARDS} cards, got {shown}"}
            )
        return data


# A deal's body as the OpenAPI document shows it; read by `deal_input.deal_read`, which accepts
# and refuses exactly what this would (tests/tournaments/test_deal_input.py). (A docstring here
# would be the schema's description.)
class DealIn(StrictSerializer):
    deal_no = StrictIntegerField(
        min_value=1, max_value=MAX_DEALS, help_text="1, 2, ...: deals are posted in order."
    )
    wild_joker = StrictCharField(
        max_length=4,
        required=False,
        allow_blank=True,
        help_text="The cut joker (13-card formats), e.g. `KD`.",
    )
    results = serializers.ListField(
        child=ResultIn(),
        min_length=1,
        max_length=SEATS_MAX,
        help_text="One per player dealt in.",
    )


class RejoinIn(StrictSerializer):
    player = ExternalIdField()


def _amount(value) -> str | None:
    return None if value is None else amount_text(value)


def template_out(template: GameTemplate) -> dict[str, Any]:
    """A template as game servers see it; `TermsInvalid` when its terms are not playable. A cash
    template is unavailable while real money is off (chips templates always are available)."""
    rules = template.game_terms().rules
    real_money = real_money_here()
    available = template.currency == CHIPS or real_money.available
    return {
        "slug": template.slug,
        "format": template.format,
        "currency": template.currency,
        "seats": template.seats,
        "point_value": _amount(template.point_value),
        "entry_fee": _amount(template.entry_fee),
        "fee_percent": _amount(template.fee_percent),
        "deals": template.deals,
        "rules": rules.to_dict(),
        "split_policy": template.split_policy,
        "rejoin_allowed": template.rejoin_allowed,
        "entry_buckets": template.entry_buckets,
        "bonus_cap_percent": _amount(template.bonus_cap_percent),
        "available": available,
        "unavailable_reason": None if available else real_money.reason,
    }


def deal_out(deal: Deal, transfers: list[int] | None = None) -> dict[str, Any]:
    """A deal as `GET /games/{id}` shows it; `transfers` when the caller has them (settlement),
    else its links are read."""
    if transfers is None:
        transfers = [link.transfer_id for link in deal.transfer_links.all()]
    return {
        "deal_no": deal.deal_no,
        "status": deal.status,
        "wild_joker": deal.wild_joker or None,
        "results": deal.results,
        "points": deal.points,
        "discrepancies": deal.discrepancies,
        "settled_at": deal.settled_at.isoformat() if deal.settled_at else None,
        "transfers": transfers,
    }


def settled(game: Game, *, waiting: bool) -> bool:
    """Nothing of the game waits for settlement: it is closed and no deal of it is `waiting`
    (docs/api.md): what `GET /games/{id}` and each item of `GET /games` say."""
    return game.status != Game.Status.OPEN and not waiting


def game_item_out(game: Game) -> dict[str, Any]:
    """A game in the list a game server recovers from; `game.waiting` from
    `tournaments.games.selectors.games_listed`."""
    return {
        "game_id": game.game_id,
        "template": game.terms["template"],
        "status": game.status,
        "settled": settled(game, waiting=game.waiting),
        "opened_at": game.created_at.isoformat(),
        "closed_at": game.finished_at.isoformat() if game.finished_at else None,
    }


def game_out(game: Game, seats: list[GamePlayer] | None = None) -> dict[str, Any]:
    """A game's state; a game just opened passes its `seats` (it has no deal yet)."""
    if seats is None:
        seats = list(game.players.select_related("player").order_by("seat"))
        deals = list(game.deals.order_by("deal_no").prefetch_related("transfer_links"))
    else:
        deals = []
    return _game_state(game, seats, deals)


def games_rendered(closed: Sequence[GameClosed]) -> dict[int, dict[str, Any]]:
    """Games as `GET /games/{id}` answers them, from the rows as the service wrote them: the
    data of the `game.closed` and `game.cancelled` events (rummy_ledger.events)."""
    return {c.pk: _game_state(c.game, c.seats, c.deals, c.transfers) for c in closed}


def deals_rendered(settled: Sequence[DealSettled]) -> dict[int, dict[str, Any]]:
    """Deals as `GET /games/{id}` shows them, with their `game_id`, as settlement wrote them:
    the data of the `deal.settled` events."""
    return {s.pk: {**deal_out(s.deal, s.transfers), "game_id": s.game_id} for s in settled}


def _game_state(
    game: Game,
    seats: list[GamePlayer],
    deals: list[Deal],
    transfers: dict[int, list[int]] | None = None,
) -> dict[str, Any]:
    return {
        "game_id": game.game_id,
        "template": game.terms["template"],
        "format": game.format,
        "currency": game.currency,
        "status": game.status,
        "outcome": game.outcome or None,
        "terms": game.terms,
        "deals_played": game.deals_played,
        "settled": settled(game, waiting=any(d.status != Deal.Status.SETTLED for d in deals)),
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
                "paid_in": {b: amount_text(a) for b, a in contributions(s)},
                "payout": _amount(s.payout),
                "refund": _amount(s.refund),
            }
            for s in seats
        ],
        "deals": [deal_out(d, None if transfers is None else transfers[d.pk]) for d in deals],
    }


# --- output documentation -----------------------------------------------------------------------

Amount = serializers.CharField  # a decimal string such as "160.00"
CURRENCY = "`INR`, or `CHP` for practice chips (no fee)."
FORMAT = "points, pool101, pool201, deals (best of N) or rummy500."


class TemplateOut(serializers.Serializer):
    slug = serializers.CharField(help_text="The template's name for `POST /games`.")
    format = serializers.ChoiceField(choices=Format.choices, help_text=FORMAT)
    currency = serializers.CharField(help_text=CURRENCY)
    seats = serializers.IntegerField(help_text="The most players a game seats.")
    point_value = Amount(allow_null=True, help_text="Points: the money a point is worth.")
    entry_fee = Amount(allow_null=True, help_text="Pool, deals, Rummy 500: each player's entry.")
    fee_percent = Amount(help_text="The platform's fee, % of the prize.")
    deals = serializers.IntegerField(allow_null=True, help_text="Deals: how many are played.")
    rules = serializers.DictField(
        help_text="The resolved rule variant (tournaments.rummy.RuleSet)."
    )
    split_policy = serializers.CharField(
        help_text="Pool: how an agreed split shares the prize (`none`: no split)."
    )
    rejoin_allowed = serializers.BooleanField(help_text="Pool: an eliminated player may rejoin.")
    entry_buckets = serializers.ListField(
        child=serializers.CharField(), help_text="The wallet buckets an entry takes, in order."
    )
    bonus_cap_percent = Amount(
        help_text="The most of each entry (points: of the maximum loss) taken from bonus, in %."
    )
    available = serializers.BooleanField(
        help_text="False: no game opens with this template now (real money is off)."
    )
    unavailable_reason = serializers.CharField(
        allow_null=True, help_text="Why the template is unavailable; null when it is available."
    )


class TemplatesOut(serializers.Serializer):
    templates = TemplateOut(many=True, help_text="The active templates.")


class TermsOut(TemplateOut):
    slug = None
    available = None
    unavailable_reason = None
    bonus_cap_percent = Amount(required=False, help_text="Absent in games opened before the cap.")
    template = serializers.CharField(help_text="The template's slug when the game opened.")
    stake = Amount(help_text="What each player put into escrow on joining.")


class SeatOut(serializers.Serializer):
    player = serializers.CharField(help_text="The player's external id.")
    seat = serializers.IntegerField(help_text="1, 2, ... in the order of `players`.")
    score = serializers.IntegerField(help_text="Points so far.")
    eliminated = serializers.BooleanField(help_text="Pool: out of the game.")
    rejoins = serializers.IntegerField(help_text="Pool: times rejoined.")
    entries = serializers.IntegerField(help_text="Entries paid (1 + rejoins).")
    paid_in = serializers.DictField(child=Amount(), help_text="bucket -> amount")
    payout = Amount(help_text="Won, once the game has ended.")
    refund = Amount(help_text="Returned from escrow, once the game has ended.")


class DiscrepancyOut(serializers.Serializer):
    claimed = serializers.IntegerField(
        required=False, help_text="Points the game server claimed (when they differ)."
    )
    computed = serializers.IntegerField(required=False, help_text="The engine's points, settled.")
    posted_outcome = serializers.CharField(
        required=False, help_text="The outcome posted, when the cards overruled it."
    )
    scored_outcome = serializers.CharField(
        required=False,
        help_text="The outcome the cards bear out (e.g. a valid hand posted `lost` is "
        "`valid_second`: 2 points).",
    )


class DealResultOut(serializers.Serializer):
    """A stored result: what was posted, in canonical card notation."""

    player = serializers.CharField(help_text="The player's external id.")
    outcome = serializers.CharField(
        required=False, allow_null=True, help_text="As posted (13-card formats)."
    )
    groups = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        allow_null=True,
        help_text="13-card formats: the hand as grouped.",
    )
    claimed_points = serializers.IntegerField(
        required=False, allow_null=True, help_text="The game server's count, if it sent one."
    )
    melded = serializers.ListField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="Rummy 500: the melds laid down.",
    )
    laid_off = serializers.ListField(
        child=LaidOffField(), required=False, help_text="Rummy 500: cards laid off."
    )
    in_hand = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="Rummy 500: cards left."
    )


class DealOut(serializers.Serializer):
    deal_no = serializers.IntegerField(help_text="The deal's number in the game.")
    status = serializers.ChoiceField(
        choices=Deal.Status.choices, help_text="`stored` until a Celery job has settled it."
    )
    wild_joker = serializers.CharField(allow_null=True, help_text="The cut joker, if any.")
    results = DealResultOut(many=True, help_text="Each player's result, as posted.")
    points = serializers.DictField(
        child=serializers.IntegerField(), help_text="player -> the engine's points"
    )
    discrepancies = serializers.DictField(
        child=DiscrepancyOut(), help_text="player -> where the engine and the game server differ"
    )
    settled_at = serializers.DateTimeField(allow_null=True, help_text="null until settled.")
    transfers = serializers.ListField(
        child=serializers.IntegerField(), help_text="The ledger transfers its settlement posted."
    )


class GameOut(serializers.Serializer):
    game_id = serializers.CharField(help_text="The game server's id of the game.")
    template = serializers.CharField(help_text="The template's slug.")
    format = serializers.ChoiceField(choices=Format.choices, help_text=FORMAT)
    currency = serializers.CharField(help_text=CURRENCY)
    status = serializers.ChoiceField(
        choices=Game.Status.choices, help_text="open, finished, cancelled or reversed."
    )
    outcome = serializers.CharField(allow_null=True, help_text="How it ended; null while open.")
    terms = TermsOut(help_text="The terms the game opened with (a copy of its template's).")
    deals_played = serializers.IntegerField(help_text="Deals posted.")
    settled = serializers.BooleanField(
        help_text="Nothing of the game waits for settlement: it is closed (finished, cancelled or "
        "reversed: its escrow paid out) and every deal posted is settled. False while it is open, "
        "also before its first deal; each deal's own `status` says whether it is settled."
    )
    collected = Amount(help_text="Entries taken into escrow.")
    paid_out = Amount(help_text="Prizes paid.")
    refunded = Amount(help_text="Returned to the players.")
    fee = Amount(help_text="The platform's fee.")
    players = SeatOut(many=True, help_text="Each seat.")
    deals = DealOut(many=True, help_text="Each deal posted, in order.")


class GameItemOut(serializers.Serializer):
    game_id = serializers.CharField(help_text="The game server's id of the game.")
    template = serializers.CharField(help_text="The template's slug.")
    status = serializers.ChoiceField(
        choices=Game.Status.choices, help_text="open, finished, cancelled or reversed."
    )
    settled = serializers.BooleanField(
        help_text="As `GET /games/{game_id}` says it: the game is closed and every deal posted is "
        "settled. False while it is open."
    )
    opened_at = serializers.DateTimeField(help_text="When the game was opened (UTC).")
    closed_at = serializers.DateTimeField(
        allow_null=True, help_text="When it finished or was cancelled (UTC); null while open."
    )


class GamesOut(serializers.Serializer):
    games = GameItemOut(many=True, help_text="The client's games, oldest first.")
    next = serializers.CharField(allow_null=True, help_text=NEXT)


class GamesQuery(PageQuery):
    status = serializers.ChoiceField(choices=Game.Status.choices, required=False)


class DealAcceptedOut(serializers.Serializer):
    game_id = serializers.CharField(help_text="The game server's id of the game.")
    deal_no = serializers.IntegerField(help_text="The deal's number.")
    status = serializers.ChoiceField(
        choices=Deal.Status.choices, help_text="`stored`: a Celery job settles it."
    )
