"""The GST rates on online money gaming deposits in force so far: data (loaded into
`wallets.GstRate` by the migration that dated the rates), never a constant of the code.

Sources:
- 28 % of the full face value from 1 October 2023: the CGST (Amendment) Act 2023 and CGST Rule
  31B, notified for 1 October 2023 (GST Council, 50th and 51st meetings, July-August 2023);
- 40 % from 22 September 2025: GST Council, 56th meeting (3 September 2025), the rate
  rationalisation notified for 22 September 2025.
Later rates are added by finance through maker-checker (`wallets.tax.gst_rates`).
"""

from datetime import date
from decimal import Decimal

RATES = (
    (
        date(2023, 10, 1),
        Decimal("28.00"),
        "CGST (Amendment) Act 2023, CGST Rule 31B; GST Council 50th and 51st meetings",
    ),
    (
        date(2025, 9, 22),
        Decimal("40.00"),
        "GST Council 56th meeting (3 September 2025); in force from 22 September 2025",
    ),
)
