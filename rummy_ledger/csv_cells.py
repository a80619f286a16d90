"""CSV files that a spreadsheet opens as data, never as formulas.

A cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return is a formula to Excel,
LibreOffice and Google Sheets (OWASP, "CSV Injection"): such a cell is written with a leading `'`,
which the spreadsheet shows as text; a plain number (`-12.50`) is written as it is, so amounts
stay numbers. The file starts with a UTF-8 byte order mark, without which Excel reads "₹" as
Windows-1252."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from typing import IO, Any

CONTENT_TYPE = "text/csv; charset=utf-8"
BOM = "\ufeff"
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?")  # ASCII digits only


def cell(value: Any) -> str:
    """The text of one cell, made inert if a spreadsheet would run it."""
    text = "" if value is None else str(value)
    if text.startswith(_FORMULA_START) and not _PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


def csv_write(stream: IO[str], header: list[str], rows: Iterable[Iterable[Any]]) -> None:
    """The byte order mark, the header and the rows, every cell through `cell`."""
    stream.write(BOM)
    writer = csv.writer(stream)
    writer.writerow([cell(value) for value in header])
    writer.writerows([cell(value) for value in row] for row in rows)


def csv_response(name: str, header: list[str], rows: Iterable[Iterable[Any]]):
    """A CSV download (`name`, with any `:` of an account code or player id made `_`): the header
    names the unit, the values stay plain decimals; no cell runs as a formula. Every download is
    an export in the staff audit list (rummy_ledger/staff/middleware.py sees it go out)."""
    from django.http import HttpResponse

    response = HttpResponse(content_type=CONTENT_TYPE)
    response["Content-Disposition"] = f'attachment; filename="{name.replace(":", "_")}"'
    csv_write(response, header, rows)
    return response
