"""Maker-checker: proposals post nothing until approved, never by their proposer, and once."""

from decimal import Decimal

import pytest
from django.db import IntegrityError, transaction
from djmoney.money import Money

from tests.builders import funded_player, move, points_game
from tests.wallets.invariants import ledger_violations
from tournaments.games.queries import game_transfer_ids
from wallets.errors import (
    AlreadyDecided,
    InsufficientFunds,
    PermissionRefused,
    ProposalInvalid,
    SelfApproval,
)
from wallets.models import Account, Adjustment, Reversal, Transfer
from wallets.reconciliation import reconcile_run
from wallets.services.adjustments import adjustment_propose
from wallets.services.proposals import proposal_decide
from wallets.services.reversals import reversal_propose

pytestmark = pytest.mark.django_db


def balance(code: str) -> Decimal:
    return Account.objects.get(code=code).balance.amount


def propose(operator, player, direction="credit", amount="50.00", bucket="deposit"):
    return adjustment_propose(
        proposed_by=operator,
        player=player,
        bucket=bucket,
        direction=direction,
        amount=Money(amount, "INR"),
        reason="goodwill after a disconnect",
    )


def test_proposal_posts_nothing_until_approved(operator, approver, alice):
    player = alice["deposit"].player
    transfers = Transfer.objects.count()

    adj = propose(operator, player)

    assert Transfer.objects.count() == transfers
    assert balance("player:alice:deposit") == Decimal("500.00")

    proposal_decide(model=Adjustment, proposal_id=adj.pk, approve=True, decided_by=approver)

    adj.refresh_from_db()
    assert adj.status == "approved" and adj.decided_by == approver
    assert balance("player:alice:deposit") == Decimal("550.00")
    assert adj.transfer.kind == "adjustment"
    legs = {e.account.code: e.amount.amount for e in adj.transfer.entries.all()}
    assert legs == {
        "player:alice:deposit": Decimal("50.00"),
        "platform:adjustments": Decimal("-50.00"),
    }
    assert ledger_violations() == []


def test_approving_twice_posts_once_and_the_second_decision_is_refused(
    operator, approver, approver2, alice
):
    adj = propose(operator, alice["deposit"].player)

    proposal_decide(
        model=Adjustment, proposal_id=adj.pk, approve=True, decided_by=approver, note="first"
    )
    for again, note in ((approver, "again"), (approver2, "second")):
        with pytest.raises(AlreadyDecided, match=r"already approved by approver at .* IST"):
            proposal_decide(
                model=Adjustment, proposal_id=adj.pk, approve=True, decided_by=again, note=note
            )
    with pytest.raises(AlreadyDecided):
        proposal_decide(model=Adjustment, proposal_id=adj.pk, approve=False, decided_by=approver2)

    adj.refresh_from_db()
    assert (adj.status, adj.decided_by, adj.decision_note) == ("approved", approver, "first")
    assert Transfer.objects.filter(kind="adjustment").count() == 1
    assert balance("player:alice:deposit") == Decimal("550.00")


def test_self_approval_is_refused(alice):
    from tests.builders import staff

    both = staff("both", "finance operator", "finance approver")
    adj = propose(both, alice["deposit"].player)

    with pytest.raises(SelfApproval):
        proposal_decide(model=Adjustment, proposal_id=adj.pk, approve=True, decided_by=both)
    with pytest.raises(SelfApproval):
        proposal_decide(model=Adjustment, proposal_id=adj.pk, approve=False, decided_by=both)

    adj.refresh_from_db()
    assert adj.status == "proposed" and adj.transfer is None
    assert balance("player:alice:deposit") == Decimal("500.00")
    # the database refuses it too
    with pytest.raises(IntegrityError), transaction.atomic():
        Adjustment.objects.filter(pk=adj.pk).update(decided_by=both)


def test_a_debit_of_more_than_the_bucket_holds_is_refused_at_proposal(operator, alice):
    count = Adjustment.objects.count()

    with pytest.raises(ProposalInvalid, match=r"below zero \(it holds ₹500.00\)"):
        propose(operator, alice["deposit"].player, direction="debit", amount="600.00")

    assert Adjustment.objects.count() == count
    assert balance("player:alice:deposit") == Decimal("500.00")


def test_a_debit_the_bucket_no_longer_covers_is_refused_at_approval(operator, approver, alice):
    adj = propose(operator, alice["deposit"].player, direction="debit", amount="400.00")
    move(alice["deposit"], funded_player("bob", "0")["deposit"], "200.00", "spent-meanwhile")

    with pytest.raises(InsufficientFunds, match="below zero"):
        proposal_decide(model=Adjustment, proposal_id=adj.pk, approve=True, decided_by=approver)

    adj.refresh_from_db()
    assert adj.status == "proposed"
    assert balance("player:alice:deposit") == Decimal("300.00")
    assert not Transfer.objects.filter(kind="adjustment").exists()


def test_debit_and_reject(operator, approver, alice):
    debit = propose(operator, alice["deposit"].player, direction="debit", amount="100.00")
    other = propose(operator, alice["deposit"].player)

    proposal_decide(model=Adjustment, proposal_id=debit.pk, approve=True, decided_by=approver)
    proposal_decide(
        model=Adjustment,
        proposal_id=other.pk,
        approve=False,
        decided_by=approver,
        note="no evidence",
    )

    assert balance("player:alice:deposit") == Decimal("400.00")
    with pytest.raises(AlreadyDecided):
        proposal_decide(model=Adjustment, proposal_id=other.pk, approve=True, decided_by=approver)
    assert Transfer.objects.filter(kind="adjustment").count() == 1


def test_roles_are_enforced_by_the_services(viewer, operator, alice):
    with pytest.raises(PermissionRefused):
        propose(viewer, alice["deposit"].player)
    adj = propose(operator, alice["deposit"].player)
    with pytest.raises(PermissionRefused):
        proposal_decide(model=Adjustment, proposal_id=adj.pk, approve=True, decided_by=operator)
    with pytest.raises(PermissionRefused):
        proposal_decide(model=Adjustment, proposal_id=adj.pk, approve=True, decided_by=viewer)
    assert not Transfer.objects.filter(kind="adjustment").exists()


def test_chips_adjustment_goes_against_chips_issuance(operator, approver, alice):
    adj = propose(operator, alice["deposit"].player, bucket="chips", amount="1000.00")
    proposal_decide(model=Adjustment, proposal_id=adj.pk, approve=True, decided_by=approver)
    assert balance("player:alice:chips") == Decimal("1000.00")
    assert ledger_violations() == []


# --- reversal of a settled game -----------------------------------------------------------------


def test_reversal_of_a_settled_game_restores_every_wallet(operator, approver, game_server):
    game = points_game(game_server, "g1")  # every player funded with 500.00, then played
    assert game.status == "finished" and game.fee > 0
    assert balance("player:a:winnings") > 0
    ids = game_transfer_ids(game)
    rev = reversal_propose(
        proposed_by=operator, reference=f"game:{game.pk}", transfer_ids=ids, reason="collusion"
    )
    assert Transfer.objects.filter(kind="reversal").count() == 0

    proposal_decide(model=Reversal, proposal_id=rev.pk, approve=True, decided_by=approver)
    with pytest.raises(AlreadyDecided):  # twice: refused, posts once
        proposal_decide(model=Reversal, proposal_id=rev.pk, approve=True, decided_by=approver)

    rev.refresh_from_db()
    assert rev.status == "approved" and len(rev.posted_transfer_ids) == len(ids)
    assert Transfer.objects.filter(kind="reversal").count() == len(ids)
    # entries back, prizes and fee taken back: as if the game never happened
    for p in "abcd":
        assert balance(f"player:{p}:deposit") == Decimal("500.00")
        assert balance(f"player:{p}:winnings") == 0
    assert balance(game.escrow.code) == 0
    assert ledger_violations() == []
    assert reconcile_run(trigger="command").status == "clean"


def test_reversal_refused_when_a_player_already_spent_the_prize(operator, approver, game_server):
    game = points_game(game_server, "g1")
    winnings = balance("player:a:winnings")
    assert winnings > 0
    spend = propose(
        operator,
        Account.objects.get(code="player:a:winnings").player,
        "debit",
        f"{winnings:.2f}",
        bucket="winnings",
    )
    proposal_decide(model=Adjustment, proposal_id=spend.pk, approve=True, decided_by=approver)
    rev = reversal_propose(
        proposed_by=operator,
        reference=f"game:{game.pk}",
        transfer_ids=game_transfer_ids(game),
        reason="fraud",
    )
    reversals = Transfer.objects.filter(kind="reversal").count()

    with pytest.raises(InsufficientFunds, match=r"player:a:winnings below zero"):
        proposal_decide(model=Reversal, proposal_id=rev.pk, approve=True, decided_by=approver)

    rev.refresh_from_db()
    assert rev.status == "proposed"
    assert Transfer.objects.filter(kind="reversal").count() == reversals == 0
    assert ledger_violations() == []


def test_a_game_is_proposed_for_reversal_once(operator, game_server):
    game = points_game(game_server, "g1")
    ids = game_transfer_ids(game)
    reversal_propose(
        proposed_by=operator, reference=f"game:{game.pk}", transfer_ids=ids, reason="x"
    )
    with pytest.raises(Exception, match="already"):
        reversal_propose(
            proposed_by=operator, reference=f"game:{game.pk}", transfer_ids=ids, reason="x"
        )
    assert Reversal.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_approvers_at_the_same_moment_post_once():
    from tests.builders import funded_player, staff
    from tests.concurrency import run_in_threads

    accounts = funded_player("zed", "100.00")
    operator = staff("op", "finance operator")
    approvers = [staff(f"ap{n}", "finance approver") for n in range(2)]
    adj = propose(operator, accounts["deposit"].player)

    results = run_in_threads(
        lambda n: proposal_decide(
            model=Adjustment, proposal_id=adj.pk, approve=True, decided_by=approvers[n]
        ),
        2,
    )

    # one decides, the other is told it was already decided
    assert sorted(type(r).__name__ for r in results) == ["Adjustment", "AlreadyDecided"]
    assert Transfer.objects.filter(reference=f"adjustment:{adj.pk}").count() == 1
    assert balance("player:zed:deposit") == Decimal("150.00")
    assert ledger_violations() == []
