"""One catalogue of error codes: every code means one thing, every refusal uses one."""

from enum import StrEnum

import pytest

from rummy_ledger.api.codes import all_codes, catalogue
from rummy_ledger.errors import DomainError


def test_every_code_is_in_exactly_one_enum():
    codes = all_codes()
    assert len(codes) == len(set(codes)), sorted(c for c in codes if codes.count(c) > 1)


def test_a_free_string_is_not_a_code():
    with pytest.raises(TypeError):
        DomainError("nope", code="made_up")


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def test_every_domain_error_class_uses_a_catalogue_code():
    import tournaments.errors  # noqa: F401  (the classes register by being defined)
    import wallets.errors  # noqa: F401
    from rummy_ledger.api import idempotency  # noqa: F401

    enums = set(catalogue())
    for cls in [DomainError, *_subclasses(DomainError)]:
        assert isinstance(cls.code, StrEnum) and type(cls.code) in enums, cls
