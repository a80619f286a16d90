import pytest

from tests.builders import make_api
from tests.wallets.payments import Gateway


@pytest.fixture
def gateway(db):
    """The payment gateway's client ("gateway", payments scope), driven through the API."""
    return Gateway(make_api("payments", name="gateway")[0])
