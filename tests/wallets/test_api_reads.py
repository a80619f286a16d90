"""What a payments client reads back after a crash: GET /api/v1/withdrawals/{id}, and the lists
GET /api/v1/withdrawals and GET /api/v1/deposits (by reference, cursor-paged). Its own only
(another client's is a 404 or not listed), each as its POST answers it (a withdrawal without the
balances), every item once across pages; bad query parameters a 400 that writes nothing."""

import pytest
from drf_spectacular.generators import SchemaGenerator

from tests.api.conftest import assert_envelope, ledger_state
from tests.architecture.test_openapi import _as_json_schema, conforms
from tests.builders import make_api
from tests.wallets.payments import Gateway, approve, verified, won

pytestmark = pytest.mark.django_db


def get(gateway: Gateway, path: str) -> dict:
    response = gateway.api.get(f"/api/v1/{path}")
    assert response.status_code == 200, response.content[:300]
    return response.json()


def walk(gateway: Gateway, path: str, name: str) -> tuple[list[dict], int]:
    """Every item of a list read page by page from each `next`; and how many pages."""
    items, pages, after = [], 0, None
    while True:
        page = get(gateway, path + (f"&after={after}" if after else ""))
        items += page[name]
        pages += 1
        after = page["next"]
        if after is None:
            return items, pages


def without_balances(answer: dict) -> dict:
    return {k: v for k, v in answer.items() if k != "balances"}


@pytest.fixture
def other(db):
    return Gateway(make_api("payments", name="other-gateway")[0])


@pytest.fixture
def winner(db):
    verified("w1")
    won("w1", "9000.00")
    return "w1"


def test_a_withdrawal_reads_back_as_its_post_answered_without_the_balances(gateway, other, winner):
    posted = gateway.withdraw(winner, "1000.00", reference="wd-1")
    assert posted.status_code == 201
    withdrawal_id = posted.json()["withdrawal_id"]

    read = get(gateway, f"withdrawals/{withdrawal_id}")

    assert read == without_balances(posted.json())
    assert read["status"] == "requested"  # a first withdrawal waits for finance
    approve(withdrawal_id)
    paid = gateway.paid(withdrawal_id, "utr-1")
    assert get(gateway, f"withdrawals/{withdrawal_id}") == without_balances(paid.json())
    assert paid.json()["status"] == "paid"
    # another client's withdrawal, and one that does not exist, are the same 404
    for api, missing in [(other, withdrawal_id), (gateway, withdrawal_id + 1000)]:
        assert_envelope(api.api.get(f"/api/v1/withdrawals/{missing}"), 404, "unknown_withdrawal")
    assert_envelope(gateway.api.get("/api/v1/withdrawals/99999999999999999999"), 404)


def test_withdrawals_list_by_reference_and_page_by_page(gateway, other, winner):
    posted = [gateway.withdraw(winner, "100.00", reference=f"wd-{n}").json() for n in range(5)]
    verified("w2")
    won("w2", "500.00")
    theirs = other.withdraw("w2", "100.00", reference="theirs").json()

    items, pages = walk(gateway, "withdrawals?limit=2", "withdrawals")

    assert items == [without_balances(w) for w in posted] and pages == 3
    assert walk(gateway, "withdrawals?limit=5", "withdrawals") == (items, 1)
    assert get(gateway, "withdrawals") == {"withdrawals": items, "next": None}
    assert get(gateway, "withdrawals?reference=wd-3") == {"withdrawals": [items[3]], "next": None}
    # another client's reference is not listed, nor is anything of it
    assert get(gateway, "withdrawals?reference=theirs") == {"withdrawals": [], "next": None}
    assert get(other, "withdrawals")["withdrawals"] == [without_balances(theirs)]


def test_deposits_list_each_as_its_post_answers_it_again(gateway, other):
    posted = [gateway.deposit(f"p{n % 2}", "500.00", reference=f"dep-{n}") for n in range(5)]
    assert {r.status_code for r in posted} == {201}
    other.deposit("p0", "300.00", reference="theirs")

    items, pages = walk(gateway, "deposits?limit=2", "deposits")

    again = [gateway.deposit(f"p{n % 2}", "500.00", reference=f"dep-{n}") for n in range(5)]
    assert {r.status_code for r in again} == {200}
    assert items == [r.json() for r in again] and pages == 3
    assert [d["reference"] for d in items] == [f"dep-{n}" for n in range(5)]
    assert (items[0]["amount"], items[0]["gst"], items[0]["credited"]) == (
        "500.00",
        "142.86",
        "357.14",
    )
    assert get(gateway, "deposits?reference=dep-4") == {"deposits": [items[4]], "next": None}
    assert get(gateway, "deposits?reference=theirs") == {"deposits": [], "next": None}
    assert [d["reference"] for d in get(other, "deposits")["deposits"]] == ["theirs"]


def test_a_reference_with_reserved_characters_is_found_when_encoded(gateway):
    reference = "a+b&c=d#e%f/g?h"
    assert gateway.deposit("p1", "100.00", reference=reference).status_code == 201
    encoded = "a%2Bb%26c%3Dd%23e%25f%2Fg%3Fh"
    found = get(gateway, f"deposits?reference={encoded}")["deposits"]
    assert [d["reference"] for d in found] == [reference]


@pytest.mark.parametrize("path", ["deposits", "withdrawals"])
@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("?reference=", "reference"),
        ("?reference=a%20b", "reference"),
        ("?reference=" + "r" * 101, "reference"),
        ("?reference=%00", "reference"),
        ("?limit=0", "limit"),
        ("?limit=501", "limit"),
        ("?limit=-1", "limit"),
        ("?after=x", "after"),
        ("?ref=dep-1", "ref"),
        ("?reference=a&reference=b", "reference"),
    ],
)
def test_a_bad_query_parameter_is_a_400_naming_it_and_writes_nothing(gateway, path, query, field):
    gateway.deposit("p1", "500.00", reference="dep-1")
    before = ledger_state()
    error = assert_envelope(gateway.api.get(f"/api/v1/{path}{query}"), 400, "invalid")
    assert list(error["details"]) == [field], error
    assert ledger_state() == before


@pytest.mark.parametrize("path", ["deposits", "withdrawals", "withdrawals/1"])
def test_the_reads_need_the_payments_scope(db, path):
    server = make_api("games", name="game-server")[0]
    assert_envelope(server.get(f"/api/v1/{path}"), 403, "permission_denied")


def test_the_reads_answers_match_the_schema(gateway, winner):
    openapi = _as_json_schema(SchemaGenerator().get_schema(request=None, public=True))
    withdrawal_id = gateway.withdraw(winner, "100.00", reference="wd-1").json()["withdrawal_id"]
    gateway.deposit("p1", "500.00", reference="dep-1")
    api = gateway.api
    for operation, url in [
        ("/api/v1/withdrawals/{withdrawal_id}", f"withdrawals/{withdrawal_id}"),
        ("/api/v1/withdrawals/{withdrawal_id}", f"withdrawals/{withdrawal_id + 1}"),  # 404
        ("/api/v1/withdrawals", "withdrawals?limit=1"),
        ("/api/v1/withdrawals", "withdrawals?limit=x"),  # 400
        ("/api/v1/deposits", "deposits?reference=dep-1"),
        ("/api/v1/deposits", "deposits"),
    ]:
        conforms(openapi, operation, "get", api.get(f"/api/v1/{url}"))
