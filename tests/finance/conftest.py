import pytest
from django.contrib.auth.models import Group, User

from tests.conftest import funded_player

ROLES = ("finance viewer", "finance operator", "finance approver")


def staff(username: str, *groups: str, superuser: bool = False) -> User:
    user = User.objects.create_user(
        username=username, password="pw", is_staff=True, is_superuser=superuser
    )
    user.groups.add(*Group.objects.filter(name__in=groups))
    return User.objects.get(pk=user.pk)  # fresh permission cache


@pytest.fixture
def viewer(db):
    return staff("viewer", "finance viewer")


@pytest.fixture
def operator(db):
    return staff("operator", "finance operator")


@pytest.fixture
def approver(db):
    return staff("approver", "finance approver")


@pytest.fixture
def approver2(db):
    return staff("approver2", "finance approver")


@pytest.fixture
def superuser(db):
    return staff("root", superuser=True)


@pytest.fixture
def alice(db):
    return funded_player("alice", "500.00")
