"""KYC over REST: the PAN's format, one player per verified PAN, the history kept, and what a
rejection after a verification does."""

import pytest

from wallets.models import KycRecord, Player

pytestmark = pytest.mark.django_db


def kyc_of(player: str) -> tuple[str, str]:
    p = Player.objects.get(external_id=player)
    return p.kyc_status, p.pan


def test_verified_pan_is_recorded_and_repeats_are_the_same_report(gateway):
    first = gateway.kyc("k1", "ABCDE1234F", reference="kyc-1")
    again = gateway.kyc("k1", "ABCDE1234F", reference="kyc-1")

    assert first.status_code == 201 and again.status_code == 200
    assert first.json() == {
        "player_id": "k1",
        "kyc_status": "verified",
        "pan": "ABCDE1234F",
        "reference": "kyc-1",
        "status": "verified",
    }
    assert KycRecord.objects.count() == 1
    other = gateway.kyc("k1", "ABCDE1234F", "rejected", reference="kyc-1")
    assert other.status_code == 409 and other.json()["error"]["code"] == "reference_conflict"


@pytest.mark.parametrize(
    "pan",
    [
        *["ABCD1234F", "ABCDE12345", "12345ABCDE", "ABCDE1234", "", "ABCDE 234F"],
        # nothing around it, ASCII only: what the schema's pattern says;
        # a dotless i and a long s upper-case to I and S, an Arabic-Indic one is a digit
        *[" ABCDE1234F", "ABCDE1234F\n", "\u0131BCDE1234F", "ABCDE1234\u017f", "ABCDE\u0661234F"],
    ],
)
def test_malformed_pans_are_refused_and_nothing_is_written(gateway, pan):
    response = gateway.kyc("k1", pan)
    assert response.status_code == 400
    assert response.json()["error"]["code"] in {"pan_invalid", "invalid"}
    assert not KycRecord.objects.exists() and not Player.objects.exists()


def test_lower_case_is_read_as_upper_case(gateway):
    assert gateway.kyc("k1", "abcde1234f").json()["pan"] == "ABCDE1234F"


def test_a_pan_belongs_to_one_player(gateway):
    gateway.kyc("k1", "ABCDE1234F")

    response = gateway.kyc("k2", "ABCDE1234F")

    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "pan_conflict" and "another player" in error["message"]
    assert "k1" not in response.text  # which player holds it is not said
    assert error["details"] == {"pan": "ABCDE1234F"}
    assert not Player.objects.filter(external_id="k2").exists()  # a refusal writes nothing
    assert kyc_of("k1") == ("verified", "ABCDE1234F")


def test_a_rejection_carrying_another_players_verified_pan_is_refused_and_not_kept(gateway):
    gateway.kyc("k1", "ABCDE1234F")

    response = gateway.kyc("k2", "ABCDE1234F", "rejected")

    assert response.status_code == 409, response.text
    assert response.json()["error"]["code"] == "pan_conflict" and "k1" not in response.text
    assert not KycRecord.objects.filter(player__external_id="k2").exists()
    assert not Player.objects.filter(pan="ABCDE1234F").exclude(external_id="k1").exists()


def test_a_verified_player_keeps_the_pan_until_it_is_rejected(gateway):
    gateway.kyc("k1", "ABCDE1234F")

    other_pan = gateway.kyc("k1", "ZZZZZ9999Z")
    assert other_pan.status_code == 409 and other_pan.json()["error"]["code"] == "pan_conflict"
    # a rejected attempt at another PAN is recorded and changes nothing
    assert gateway.kyc("k1", "ZZZZZ9999Z", "rejected").status_code == 201
    assert kyc_of("k1") == ("verified", "ABCDE1234F")
    # a rejection of the verified PAN revokes it, and frees it for another player
    assert gateway.kyc("k1", "ABCDE1234F", "rejected").json()["kyc_status"] == "rejected"
    assert kyc_of("k1") == ("rejected", "ABCDE1234F")
    assert gateway.kyc("k2", "ABCDE1234F").json()["kyc_status"] == "verified"
    assert gateway.kyc("k1", "ZZZZZ9999Z").json()["kyc_status"] == "verified"
    history = KycRecord.objects.filter(player__external_id="k1").order_by("pk")
    assert [(r.pan, r.status) for r in history] == [
        ("ABCDE1234F", "verified"),
        ("ZZZZZ9999Z", "rejected"),
        ("ABCDE1234F", "rejected"),
        ("ZZZZZ9999Z", "verified"),
    ]


def test_status_must_be_verified_or_rejected(gateway):
    response = gateway.kyc("k1", "ABCDE1234F", "pending")
    assert response.status_code == 400 and "status" in response.json()["error"]["details"]
    assert not KycRecord.objects.exists()


def test_games_scope_cannot_report_kyc(games_api):
    response = games_api.post(
        "/api/v1/players/k1/kyc",
        {"pan": "ABCDE1234F", "status": "verified", "reference": "x"},
        format="json",
    )
    assert response.status_code == 403 and not KycRecord.objects.exists()
