import os
import sys

sys.path.insert(0, os.path.dirname(__file__))


import subprocess  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def remove_instance_users():
    """Instances run as users the controller makes (scalws-NAME); a test that leaves its
    instances behind (it kills or stops its controllers) leaves their users: removed here,
    once every controller of the test is done. Only the users of the names this test made
    up: tests of other processes may run beside it, and their users must stay."""
    from controller_harness import NAMES_MADE, instance_user, instance_users
    before = instance_users()
    NAMES_MADE.clear()
    yield
    ours = {instance_user(n) for n in NAMES_MADE}
    for user in (instance_users() - before) & ours:
        subprocess.run(["userdel", user], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False)
