"""India's states and union territories as ISO 3166-2:IN codes (without the `IN-` prefix): the
only regions a player can be reported in (`REAL_MONEY=restricted` reads them).

Source: ISO 3166-2:IN as the ISO Online Browsing Platform lists it
(https://www.iso.org/obp/ui/#iso:code:3166:IN), 28 states and 8 union territories, after the
2020 update (Dadra and Nagar Haveli and Daman and Diu merged: IN-DH replaces IN-DN and IN-DD;
Ladakh IN-LA added) and the 2023 update (codes aligned with vehicle registration:
Chhattisgarh IN-CT -> IN-CG, Odisha IN-OR -> IN-OD, Telangana IN-TG -> IN-TS, Uttarakhand
IN-UT -> IN-UK). The codes those updates retired are still accepted, as aliases of their
successors: a gateway may not have caught up.
"""

from __future__ import annotations

REGIONS: dict[str, str] = {
    # states
    "AP": "Andhra Pradesh",
    "AR": "Arunachal Pradesh",
    "AS": "Assam",
    "BR": "Bihar",
    "CG": "Chhattisgarh",
    "GA": "Goa",
    "GJ": "Gujarat",
    "HP": "Himachal Pradesh",
    "HR": "Haryana",
    "JH": "Jharkhand",
    "KA": "Karnataka",
    "KL": "Kerala",
    "MH": "Maharashtra",
    "ML": "Meghalaya",
    "MN": "Manipur",
    "MP": "Madhya Pradesh",
    "MZ": "Mizoram",
    "NL": "Nagaland",
    "OD": "Odisha",
    "PB": "Punjab",
    "RJ": "Rajasthan",
    "SK": "Sikkim",
    "TN": "Tamil Nadu",
    "TR": "Tripura",
    "TS": "Telangana",
    "UK": "Uttarakhand",
    "UP": "Uttar Pradesh",
    "WB": "West Bengal",
    # union territories
    "AN": "Andaman and Nicobar Islands",
    "CH": "Chandigarh",
    "DH": "Dadra and Nagar Haveli and Daman and Diu",
    "DL": "Delhi",
    "JK": "Jammu and Kashmir",
    "LA": "Ladakh",
    "LD": "Lakshadweep",
    "PY": "Puducherry",
}

# Retired code -> the current one (the updates named above).
ALIASES: dict[str, str] = {
    "CT": "CG",  # 2023
    "OR": "OD",  # 2023
    "TG": "TS",  # 2023
    "UT": "UK",  # 2023
    "DN": "DH",  # 2020
    "DD": "DH",  # 2020
}


class UnknownRegion(ValueError):
    pass


def region_current(code: str) -> str:
    """The current code for `code` (an alias becomes its successor); `UnknownRegion` for
    anything that is not an Indian state or union territory (`ZZ`, `US`, `IN`, `tn`)."""
    current = ALIASES.get(code, code)
    if current not in REGIONS:
        raise UnknownRegion(
            f"{code!r} is not an ISO 3166-2:IN state or union territory code (e.g. KA, TN, TS)"
        )
    return current
