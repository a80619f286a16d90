"""The ledger's refusals and their codes (this app's part of the error-code catalogue)."""

from enum import StrEnum

from rummy_ledger.errors import (
    Conflict,
    DomainError,
    Forbidden,
    NotFound,
    Retryable,
    Unprocessable,
)


class WalletErrorCode(StrEnum):
    LEDGER_INVALID = "ledger_invalid"
    UNKNOWN_ACCOUNT = "unknown_account"
    UNKNOWN_PLAYER = "unknown_player"
    INSUFFICIENT_FUNDS = "insufficient_funds"
    REFERENCE_CONFLICT = "reference_conflict"
    ALREADY_REVERSED = "already_reversed"
    LEDGER_BUSY = "ledger_busy"
    AMOUNT_OVER_LIMIT = "amount_over_limit"
    BALANCE_OUT_OF_RANGE = "balance_out_of_range"
    STATEMENT_INVALID = "statement_invalid"
    PROPOSAL_INVALID = "proposal_invalid"
    SELF_APPROVAL = "self_approval"
    ALREADY_DECIDED = "already_decided"
    KYC_REQUIRED = "kyc_required"
    PAN_INVALID = "pan_invalid"
    PAN_CONFLICT = "pan_conflict"
    UNKNOWN_WITHDRAWAL = "unknown_withdrawal"
    WITHDRAWAL_STATE = "withdrawal_state"
    FINANCIAL_YEAR_INVALID = "financial_year_invalid"
    FINANCIAL_YEAR_OPEN = "financial_year_open"
    # player protection and the real-money switch
    DEPOSIT_LIMIT = "deposit_limit"
    DEPOSIT_BELOW_MINIMUM = "deposit_below_minimum"
    SELF_EXCLUDED = "self_excluded"
    REAL_MONEY_UNAVAILABLE = "real_money_unavailable"
    REGION_INVALID = "region_invalid"
    # the guards of a games client (docs/trust-model.md)
    PLAYER_NOT_PAIRED = "player_not_paired"
    CLIENT_CAP = "client_cap"


class LedgerError(DomainError):
    code = WalletErrorCode.LEDGER_INVALID


class UnknownAccount(LedgerError):
    code = WalletErrorCode.UNKNOWN_ACCOUNT


class AmountOverLimit(LedgerError):
    """An entry above the per-transfer maximum (`LEDGER_MAX_TRANSFER`)."""

    code = WalletErrorCode.AMOUNT_OVER_LIMIT


class BalanceOutOfRange(Unprocessable):
    """A posting that would take a balance beyond what its column holds (numeric(18,2))."""

    code = WalletErrorCode.BALANCE_OUT_OF_RANGE


class UnknownPlayer(NotFound):
    code = WalletErrorCode.UNKNOWN_PLAYER


class InsufficientFunds(Conflict):
    code = WalletErrorCode.INSUFFICIENT_FUNDS


class IdempotencyConflict(Conflict):
    """A transfer's idempotency key (built from its reference) was used for other content:
    e.g. a deposit reference that comes back with another amount."""

    code = WalletErrorCode.REFERENCE_CONFLICT


class AlreadyReversed(Conflict):
    code = WalletErrorCode.ALREADY_REVERSED


class LedgerBusy(Retryable):
    code = WalletErrorCode.LEDGER_BUSY


class MonthArchived(LedgerError):
    """A balance asked for inside an archived month, whose entries are out of the ledger."""


class ArchiveInvalid(LedgerError):
    """A month that cannot be archived or restored (yet), or a file that does not match its
    record."""


class StatementInvalid(DomainError):
    code = WalletErrorCode.STATEMENT_INVALID


class ProposalInvalid(DomainError):
    code = WalletErrorCode.PROPOSAL_INVALID


class SelfApproval(Conflict):
    code = WalletErrorCode.SELF_APPROVAL


class AlreadyDecided(Conflict):
    code = WalletErrorCode.ALREADY_DECIDED


class PermissionRefused(Forbidden):
    """A finance action by someone whose role does not include it."""


class KycRequired(Conflict):
    """A withdrawal needs a verified PAN."""

    code = WalletErrorCode.KYC_REQUIRED


class PanInvalid(DomainError):
    code = WalletErrorCode.PAN_INVALID


class PanConflict(Conflict):
    """A PAN is verified for another player, or this player is verified with another PAN."""

    code = WalletErrorCode.PAN_CONFLICT


class UnknownWithdrawal(NotFound):
    code = WalletErrorCode.UNKNOWN_WITHDRAWAL


class WithdrawalState(Conflict):
    """The withdrawal is not in a state that allows this (paid after failed, a second
    decision, a result for a withdrawal that was never approved)."""

    code = WalletErrorCode.WITHDRAWAL_STATE


class FinancialYearInvalid(DomainError):
    code = WalletErrorCode.FINANCIAL_YEAR_INVALID


class FinancialYearOpen(Conflict):
    """A financial year is closed (TDS year end) only once it has ended."""

    code = WalletErrorCode.FINANCIAL_YEAR_OPEN


class DepositLimitReached(Conflict):
    """A deposit over the player's daily or monthly limit; the details name it and what is left."""

    code = WalletErrorCode.DEPOSIT_LIMIT


class DepositBelowMinimum(DomainError):
    """A deposit under `DEPOSIT_MINIMUM` (400): on a few paise the GST rounds to nothing."""

    code = WalletErrorCode.DEPOSIT_BELOW_MINIMUM


class SelfExcluded(Conflict):
    """The player excluded themselves: no cash games, no deposits (withdrawals stay open)."""

    code = WalletErrorCode.SELF_EXCLUDED


class RealMoneyUnavailable(Conflict):
    """Real money is off here, or for the player's region: no cash games, no deposits."""

    code = WalletErrorCode.REAL_MONEY_UNAVAILABLE


class RegionInvalid(DomainError):
    """A region that is no ISO 3166-2:IN state or union territory code
    (`wallets.services.regions`)."""

    code = WalletErrorCode.REGION_INVALID


class PlayerNotPaired(Forbidden):
    """A games client whose guard is on may seat only players of its paired payments clients."""

    code = WalletErrorCode.PLAYER_NOT_PAIRED


class ClientCapReached(Conflict):
    """A games client's games would take more into escrow in a rolling hour than its cap."""

    code = WalletErrorCode.CLIENT_CAP
