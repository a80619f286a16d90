"""The API takes JSON only, and bounded: the only parser (`DEFAULT_PARSER_CLASSES`), so a form or
multipart body is a 415 before any view sees it.

Everything that costs the server is checked before `json.loads` runs: the body's size
(`API_MAX_BODY_BYTES`, `API_MAX_BATCH_BODY_BYTES` for the batch endpoint: the Content-Length
first, then at most that many bytes are read) and its nesting depth (`API_MAX_JSON_DEPTH`: a scan
of the raw bytes; 100,000 nested `[` used to be a RecursionError). Then the parse itself refuses
what JSON allows but a money API must not guess at: a key given twice (the last one winning
silently), `NaN` and `Infinity`, a number too large for a float (`1e999` would be Infinity by
the time a field saw it), and an integer of more than MAX_INTEGER_DIGITS digits (Python itself
refuses 4,300 with a hint about its own settings, after the work).
"""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate

from django.conf import settings
from rest_framework import exceptions, status
from rest_framework.parsers import BaseParser


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."


# A string, or an unterminated one up to the end: linear time whatever the input (no backtracking
# into the possessive repetition, and no start position is scanned twice).
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*+(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def nesting_depth(raw: bytes) -> int:
    """How deep arrays and objects nest in a JSON text, brackets inside strings not counted."""
    brackets = _STRING.sub(b"", raw).translate(None, _NOT_BRACKETS)
    return max(accumulate(_STEP[b] for b in brackets), default=0)


def _object(pairs: list[tuple[str, object]]) -> dict:
    made = dict(pairs)
    if len(made) < len(pairs):
        seen: set[str] = set()
        twice = next(key for key, _ in pairs if key in seen or seen.add(key))
        raise exceptions.ParseError(f"JSON key {twice!r} is given twice")
    return made


def _refuse_constant(name: str):
    raise exceptions.ParseError(f"{name} is not a JSON number")


MAX_INTEGER_DIGITS = 100  # no field of the API takes more than a few; int64 has 19


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INTEGER_DIGITS:
        raise exceptions.ParseError(
            f"the number {text[:40]}... has more than {MAX_INTEGER_DIGITS} digits"
        )
    return int(text)


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise exceptions.ParseError(f"the number {text[:40]} is out of range")
    return number


class StrictJSONParser(BaseParser):
    media_type = "application/json"
    limit_setting = "API_MAX_BODY_BYTES"  # the setting that bounds the body's size

    def parse(self, stream, media_type=None, parser_context=None):
        limit = getattr(settings, self.limit_setting)
        request = (parser_context or {}).get("request")
        declared = request.META.get("CONTENT_LENGTH") if request is not None else None
        too_large = f"the request body is limited to {limit} bytes"
        if declared and declared.isdigit() and int(declared) > limit:
            raise PayloadTooLarge(too_large)
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise PayloadTooLarge(too_large)
        depth = settings.API_MAX_JSON_DEPTH
        if nesting_depth(raw) > depth:
            raise exceptions.ParseError(f"JSON nests deeper than {depth} levels")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise exceptions.ParseError("the body is not UTF-8") from exc
        try:
            return json.loads(
                text,
                object_pairs_hook=_object,
                parse_constant=_refuse_constant,
                parse_float=_finite,
                parse_int=_integer,
            )
        except ValueError as exc:
            raise exceptions.ParseError(f"JSON parse error: {exc}") from exc


class BatchJSONParser(StrictJSONParser):
    """The same, for the one endpoint that takes a batch (`POST /api/v1/deals`: 100 deals are
    about 100 KB): bounded by `API_MAX_BATCH_BODY_BYTES` instead."""

    limit_setting = "API_MAX_BATCH_BODY_BYTES"
