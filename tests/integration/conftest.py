import os
import sys

sys.path.insert(0, os.path.dirname(__file__))


import subprocess  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def remove_instance_users():
    """Instances run as users the controller makes (scalws-NAME); a test that leaves its
    instances behind (it kills or stops its controllers) leaves their users: removed here,
    once every controller of the test is done."""
    from controller_harness import instance_users
    before = instance_users()
    yield
    for user in instance_users() - before:
        subprocess.run(["userdel", user], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False)
