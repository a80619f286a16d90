"""The ledger's tables: `ledger` (accounts, transfers, entries), `people` (players, their KYC),
`finance` (proposals, reconciliation reports, gateway statements), `payments` (withdrawals and
their review, TDS year ends), `bonus` (bonus lots and grants), `protection` (deposit limits,
self-exclusion), `gst` (GST rates by date, each deposit's rate), `wind_down` (closing the
real-money book), `chain` (the hash chain through the transfers, its daily digests), `flows`
(the one-way-flow report), `clients` (pairings of API clients, whose players are whose: the
clients themselves are `rummy_ledger.api.models.ApiClient`)."""

from wallets.models.bonus import BonusGrant, BonusLot, BonusSpend
from wallets.models.chain import ChainDigest, ChainLink
from wallets.models.clients import ClientEscrowTake, ClientPairing, PlayerClient
from wallets.models.double_entry import (
    BUCKET_CURRENCY,
    CASH,
    CHIPS,
    PLATFORM_CURRENCY,
    Account,
    Bucket,
    Entry,
    PlatformAccount,
    Transfer,
)
from wallets.models.finance import (
    Adjustment,
    Discrepancy,
    GatewayStatement,
    GatewayStatementLine,
    Proposal,
    ProposalStatus,
    ReconciliationReport,
    Reversal,
    ReversalTransfer,
)
from wallets.models.flows import FlaggedPair, FlowReport, PairClearance
from wallets.models.gst import DepositGst, GstRate, GstRateProposal
from wallets.models.months import MonthArchive, MonthClose, MonthCloseBalance
from wallets.models.payments import GatewayDeposit, TdsYearEnd, Withdrawal, WithdrawalReview
from wallets.models.people import KycRecord, KycStatus, Player
from wallets.models.protection import ProtectionChange
from wallets.models.wind_down import WindDown, WindDownLine

__all__ = [
    "BUCKET_CURRENCY",
    "CASH",
    "CHIPS",
    "PLATFORM_CURRENCY",
    "Account",
    "Adjustment",
    "BonusGrant",
    "BonusLot",
    "BonusSpend",
    "Bucket",
    "ChainDigest",
    "ChainLink",
    "ClientEscrowTake",
    "ClientPairing",
    "DepositGst",
    "Discrepancy",
    "Entry",
    "FlaggedPair",
    "FlowReport",
    "GatewayDeposit",
    "GatewayStatement",
    "GatewayStatementLine",
    "GstRate",
    "GstRateProposal",
    "KycRecord",
    "KycStatus",
    "MonthArchive",
    "MonthClose",
    "MonthCloseBalance",
    "PairClearance",
    "PlatformAccount",
    "Player",
    "PlayerClient",
    "Proposal",
    "ProposalStatus",
    "ProtectionChange",
    "ReconciliationReport",
    "Reversal",
    "ReversalTransfer",
    "TdsYearEnd",
    "Transfer",
    "WindDown",
    "WindDownLine",
    "Withdrawal",
    "WithdrawalReview",
]
