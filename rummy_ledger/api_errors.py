"""One error envelope for every API error: {"error": {"code", "message", "details"}}."""

from django.http import Http404
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from rummy_ledger.errors import DomainError, Retryable


def error_response(status: int, code: str, message: str, details: dict | None = None) -> Response:
    body = {"error": {"code": code, "message": message, "details": details or {}}}
    return Response(body, status=status)


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
        code, message, details = "invalid", "The request is malformed.", exc.detail
        if not isinstance(details, dict):
            details = {"non_field_errors": details}
    else:
        code = exc.default_code if isinstance(exc, exceptions.APIException) else "error"
        message, details = str(getattr(exc, "detail", exc)), {}
    response.data = {"error": {"code": code, "message": message, "details": details}}
    return response
