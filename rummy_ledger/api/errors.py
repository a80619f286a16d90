"""One error envelope for every API error: {"error": {"code", "message", "details"}}, its code
from the catalogue (`rummy_ledger.api.codes`).

DRF's views answer through `exception_handler`. What fails before a view is found (an unknown
route, a trailing slash, a bad `Host` header, a body Django itself refuses) or outside DRF (a
crash) reaches Django's error handlers instead: `handler400`, `handler404` and `handler500`
(set in `rummy_ledger.urls`) answer the envelope under `/api/` and leave Django's own pages to
everything else (the admin).
"""

from django.core.exceptions import DisallowedHost, RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views import defaults
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from rummy_ledger import ids
from rummy_ledger.api.auth import InvalidKey, NetworkRefused
from rummy_ledger.api.codes import ApiErrorCode
from rummy_ledger.api.parsers import PayloadTooLarge
from rummy_ledger.errors import CommonErrorCode, DomainError, Retryable

API_PREFIX = "/api/"


# DRF's own refusals (and the API key's), by class, to the catalogue's codes: the most specific
# class listed wins.
_DRF_CODES = {
    InvalidKey: ApiErrorCode.INVALID_KEY,
    NetworkRefused: ApiErrorCode.NETWORK_REFUSED,
    exceptions.ValidationError: CommonErrorCode.INVALID,
    exceptions.NotFound: CommonErrorCode.NOT_FOUND,
    exceptions.ParseError: ApiErrorCode.PARSE_ERROR,
    exceptions.NotAuthenticated: ApiErrorCode.NOT_AUTHENTICATED,
    exceptions.AuthenticationFailed: ApiErrorCode.AUTHENTICATION_FAILED,
    exceptions.PermissionDenied: ApiErrorCode.PERMISSION_DENIED,
    exceptions.MethodNotAllowed: ApiErrorCode.METHOD_NOT_ALLOWED,
    exceptions.NotAcceptable: ApiErrorCode.NOT_ACCEPTABLE,
    exceptions.UnsupportedMediaType: ApiErrorCode.UNSUPPORTED_MEDIA_TYPE,
    exceptions.Throttled: ApiErrorCode.RATE_LIMITED,
    PayloadTooLarge: ApiErrorCode.PAYLOAD_TOO_LARGE,
}


def envelope(code: str, message: str, details: dict | None = None) -> dict:
    return {"error": {"code": str(code), "message": message, "details": details or {}}}


def error_response(status: int, code: str, message: str, details: dict | None = None) -> Response:
    return Response(envelope(code, message, details), status=status)


def _drf_code(exc: exceptions.APIException) -> str:
    for cls in type(exc).__mro__:
        if cls in _DRF_CODES:
            return _DRF_CODES[cls]
    return ApiErrorCode.SERVER_ERROR


def exception_handler(exc, context):
    if isinstance(exc, DomainError):
        response = error_response(exc.status, exc.code, exc.message, exc.details)
        if isinstance(exc, Retryable):
            response["Retry-After"] = str(exc.retry_after)
        return response
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        message, details = "The request is malformed.", exc.detail
        if not isinstance(details, dict):
            details = {"non_field_errors": details}
    else:
        message, details = str(getattr(exc, "detail", exc)), getattr(exc, "details", {})
    response.data = envelope(_drf_code(exc), message, details)
    return response


# --- Django's error handlers: the envelope under /api/, Django's pages elsewhere ----------------


def _api(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX)


def _json(status_code: int, code: str, message: str) -> JsonResponse:
    return JsonResponse(envelope(code, message), status=status_code)


def handler400(request: HttpRequest, exception: Exception) -> HttpResponse:
    if not _api(request):
        return defaults.bad_request(request, exception)
    if isinstance(exception, RequestDataTooBig):
        return _json(413, ApiErrorCode.PAYLOAD_TOO_LARGE, "The request body is too large.")
    if isinstance(exception, DisallowedHost):
        return _json(400, ApiErrorCode.BAD_REQUEST, "This server does not answer for that Host.")
    return _json(400, ApiErrorCode.BAD_REQUEST, "The request is malformed.")


def handler404(request: HttpRequest, exception: Exception) -> HttpResponse:
    if not _api(request):
        return defaults.page_not_found(request, exception)
    return _json(
        404,
        CommonErrorCode.NOT_FOUND,
        f"No such endpoint (API paths have no trailing slash; an id is {ids.RULE}).",
    )


def handler500(request: HttpRequest) -> HttpResponse:
    if not _api(request):
        return defaults.server_error(request)
    return _json(500, ApiErrorCode.SERVER_ERROR, "Internal error; it has been logged.")
