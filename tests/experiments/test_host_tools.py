"""Host set-up for live trials: route options that make a connection start as a trial says,
and link options such as a NIC's GSO buffer size."""

from __future__ import annotations

import json
import os
import subprocess
import uuid

import pytest

from bufferlab.experiments.common.host_tools import set_link_options, set_route_options

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root for network namespaces"),
]


def ip(*args: str) -> str:
    """Run ip, its output; fails the test on an error."""
    return subprocess.run(["ip", *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture
def namespace():
    """A namespace with a veth pair d0-d1, d0 up at 10.9.0.1/24; removed afterwards."""
    name = f"blht{uuid.uuid4().hex[:6]}"
    ip("netns", "add", name)
    try:
        ip("-n", name, "link", "add", "d0", "type", "veth", "peer", "name", "d1")
        ip("-n", name, "addr", "add", "10.9.0.1/24", "dev", "d0")
        ip("-n", name, "link", "set", "d1", "up")
        ip("-n", name, "link", "set", "d0", "up")
        yield name
    finally:
        subprocess.run(["ip", "netns", "delete", name], capture_output=True)


def test_every_route_of_the_device_gets_the_options(namespace):
    set_route_options(namespace, {"congctl": "cubic", "initcwnd": "4"}, dev="d0")
    route = ip("-n", namespace, "route", "show", "dev", "d0")
    assert "10.9.0.0/24" in route
    assert "congctl cubic" in route and "initcwnd 4" in route
    # The route keeps what it was: its source address and scope.
    assert "src 10.9.0.1" in route and "scope link" in route


def test_an_unknown_algorithm_is_refused_with_ips_reason(namespace):
    with pytest.raises(RuntimeError, match=r"ip -n .* congctl nosuchcc"):
        set_route_options(namespace, {"congctl": "nosuchcc"}, dev="d0")


def test_link_options_set_gso_max_segs_and_ips_refusal_is_raised(namespace):
    def gso_max_segs() -> int:
        (link,) = json.loads(ip("-n", namespace, "-d", "-j", "link", "show", "d0"))
        return link["gso_max_segs"]

    # The kernel's own value: GSO buffers as large as the rate asks for.
    assert gso_max_segs() == 65535
    set_link_options(namespace, {"gso_max_segs": "1"}, dev="d0")
    assert gso_max_segs() == 1
    with pytest.raises(RuntimeError, match=r"ip -n .* gso_max_segs lots"):
        set_link_options(namespace, {"gso_max_segs": "lots"}, dev="d0")
