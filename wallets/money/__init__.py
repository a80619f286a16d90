"""What an amount of money is, in one place: `amounts` (pure: the decimals every money module
shares and an amount written on the wire), `parsing` (an amount read from a client) and
`formatting` (how money and time read for finance staff)."""
