"""`POST /api/v1/deals`: up to 100 finished deals of any of the client's games in one request.

Each deal is validated as the single post (`POST /games/{id}/deals`) validates it
(`deal_input.deal_read`) and stored by the single post's path, one after the other in the order
posted: their games locked and read in one statement, the new deals inserted in one more
(`intake.deals_store`). A refusal is that deal's result (the status and the `error` the single post
would answer) and blocks no other. The deals stored are settled by a worker woken after the commit
(`tournaments.tasks.settle_waiting`). The answer replays for the same `Idempotency-Key`, except
when a deal met contention (409 `busy`, `game_busy`, `ledger_busy`): then what was stored commits,
the key is not claimed, the answer carries `Retry-After`, and a retry with the same key runs again
(the deals stored answer as replays). A batch stops taking deals after `API_BATCH_SECONDS` (well
within the request's deadline, `REQUEST_DEADLINE_SECONDS`, past which the whole request would be
lost): the rest are 409 `busy`.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import exceptions, serializers
from rest_framework.response import Response

from rummy_ledger import ids
from rummy_ledger.api.errors import exception_handler
from rummy_ledger.api.fields import ExternalIdField, StrictSerializer
from rummy_ledger.api.idempotency import IDEMPOTENCY_HEADER, idempotent
from rummy_ledger.api.parsers import BatchJSONParser
from rummy_ledger.api.schema import error_codes
from rummy_ledger.errors import CommonErrorCode, Retryable
from tournaments.games.api import serializers as s
from tournaments.games.api.deal_input import deal_read
from tournaments.games.api.views import DEAL_REFUSALS, GamesScope
from tournaments.games.services import intake
from tournaments.models import Deal
from wallets.errors import WalletErrorCode as W

BATCH_MAX_DEALS = 100
# What a deal of a batch can be answered: stored (202), or what the single post would refuse it
# with, contention included (the game's lock wait, the ledger's when an earlier deal of the game
# is settled on the way).
ITEM_CODES = sorted(
    {str(code) for codes in DEAL_REFUSALS.values() for code in codes}
    | {CommonErrorCode.INVALID, CommonErrorCode.BUSY, W.LEDGER_BUSY}
)
ITEM_STATUSES = [202, 400, 404, 409, 422]


# --- the body ---------------------------------------------------------------------------------


class DealBatchItemIn(s.DealIn):
    """One deal of a batch: the body of `POST /games/{game_id}/deals`, and its game."""

    game_id = ExternalIdField(help_text="The game (one of this client's) the deal belongs to.")


class EachOnItsOwnField(serializers.ListField):
    """A list whose items the view checks one by one (a bad one is refused in its own result):
    here only the list and its length."""

    def run_child_validation(self, data):
        return list(data)


class DealBatchIn(StrictSerializer):
    deals = EachOnItsOwnField(
        child=DealBatchItemIn(),
        min_length=1,
        max_length=BATCH_MAX_DEALS,
        help_text=f"1 to {BATCH_MAX_DEALS} deals of any of this client's games, each exactly as "
        "the single post takes it plus its `game_id`; checked and stored in this order, each on "
        "its own.",
    )


# --- the answer -------------------------------------------------------------------------------


@extend_schema_field(
    {
        "type": "object",
        "description": "Why the deal was refused: the `error` the single post would answer.",
        "properties": {
            "code": {"type": "string", "enum": ITEM_CODES, "description": "Switch on this."},
            "message": {"type": "string", "description": "For people, not for parsing."},
            "details": {
                "type": "object",
                "additionalProperties": {},
                "description": "What the code is about (the fields refused, the reasons...).",
            },
        },
        "required": ["code", "message", "details"],
    }
)
class ItemErrorField(serializers.JSONField):
    pass


class DealBatchResultOut(serializers.Serializer):
    game_id = serializers.CharField(
        allow_null=True, help_text="The deal's `game_id` as posted (null when it is not an id)."
    )
    deal_no = serializers.IntegerField(
        allow_null=True,
        help_text="The deal's `deal_no` as posted (null when it is not an integer).",
    )
    status = serializers.ChoiceField(
        choices=ITEM_STATUSES,
        help_text="202: stored now, or before with this same content (a replay); otherwise the "
        "status the single post would answer this deal with.",
    )
    deal_status = serializers.ChoiceField(
        choices=Deal.Status.choices,
        required=False,
        help_text="With 202: `stored` (a Celery job settles it) or `settled`.",
    )
    error = ItemErrorField(required=False, help_text="With a 4xx: why.")


class DealBatchOut(serializers.Serializer):
    results = serializers.ListField(
        child=DealBatchResultOut(), help_text="One per deal posted, in the order posted."
    )


RETRY_AFTER = OpenApiParameter(
    "Retry-After",
    int,
    OpenApiParameter.HEADER,
    response=[200],
    description="Present when a deal met contention (409 `busy`, `game_busy`, `ledger_busy`): "
    "this answer is not remembered; retry with the same Idempotency-Key after this many seconds.",
)


# --- the view ---------------------------------------------------------------------------------


class DealBatchView(GamesScope):
    parser_classes = [BatchJSONParser]  # API_MAX_BATCH_BODY_BYTES, for this endpoint alone

    @extend_schema(
        request=DealBatchIn,
        responses={200: DealBatchOut},
        parameters=[IDEMPOTENCY_HEADER, RETRY_AFTER],
        summary="Post up to 100 finished deals; each checked and stored on its own",
        extensions=error_codes({}),
    )
    def post(self, request):
        def run():
            body = DealBatchIn(data=request.data)
            body.is_valid(raise_exception=True)
            items = body.validated_data["deals"]
            read = [_read(item) for item in items]
            valid = [n for n, deal in enumerate(read) if isinstance(deal, tuple)]
            stored = intake.deals_store(
                client=request.auth,
                deals=[read[n] for n in valid],
                seconds=settings.API_BATCH_SECONDS,
            )
            outcomes = dict(enumerate(read)) | dict(zip(valid, stored, strict=True))
            results = [_result(items[n], outcomes[n]) for n in range(len(items))]
            response = Response({"results": [result for result, _ in results]})
            if any(retry for _, retry in results):
                response["Retry-After"] = str(settings.REQUEST_BUSY_RETRY_AFTER)
            return response

        return idempotent(request, run, remember=lambda response: "Retry-After" not in response)


def _read(item: Any) -> tuple[str, dict] | exceptions.ValidationError:
    try:
        return _valid(item)
    except exceptions.ValidationError as refused:
        return refused


def _result(item: Any, outcome: intake.Outcome | Exception) -> tuple[dict, bool]:
    """One deal's result, and whether retrying may help."""
    echo = _echo(item)
    if outcome is None:
        outcome = _out_of_time()
    if isinstance(outcome, Exception):
        answer = exception_handler(outcome, {})
        result = {**echo, "status": answer.status_code, "error": answer.data["error"]}
        return result, isinstance(outcome, Retryable)
    deal, _ = outcome
    return {**echo, "status": 202, "deal_status": deal.status}, False


def _out_of_time() -> Retryable:
    """A deal not tried: the batch has run for API_BATCH_SECONDS (well within the request's
    deadline) after at least one deal that was not a replay, so that every retry makes progress."""
    return Retryable(
        "The batch ran out of time before this deal; nothing was written for it. Retry."
    )


def _valid(item: Any) -> tuple[str, dict]:
    """The deal's game and body, validated as the single post validates its path and body (one
    400 naming every field refused)."""
    if not isinstance(item, dict):
        raise exceptions.ValidationError({"non_field_errors": ["A deal is a JSON object."]})
    errors, game_id, payload = {}, None, None
    try:
        game_id = ExternalIdField().run_validation(item.get("game_id", serializers.empty))
    except exceptions.ValidationError as exc:
        errors["game_id"] = exc.detail
    try:
        payload = deal_read({k: v for k, v in item.items() if k != "game_id"})
    except exceptions.ValidationError as exc:
        errors.update(exc.detail)
    if errors:
        raise exceptions.ValidationError(errors)
    return game_id, payload


def _echo(item: Any) -> dict:
    """The deal's game and number as posted, where they are an id and a number."""
    item = item if isinstance(item, dict) else {}
    game_id, deal_no = item.get("game_id"), item.get("deal_no")
    return {
        "game_id": game_id if isinstance(game_id, str) and ids.is_external_id(game_id) else None,
        "deal_no": deal_no if type(deal_no) is int else None,
    }
