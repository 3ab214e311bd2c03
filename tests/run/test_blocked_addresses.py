"""Cloud metadata and credential endpoints (litmus.net.BLOCKED) are never sent a request, whatever
spelling names them: on a redirect hop (names resolved through an injected table, as in
test_transport_redirects), and on a probe's first request when the host is a literal or a blocked name."""

from __future__ import annotations

import ipaddress

import pytest
from build import check, flow, request, step, suite

from litmus.net import host_addresses, redirect_refusal
from litmus.run.runner import RunOptions, run_suites

SOURCE = "http://api.example.test/start"
# Names a hop may point at, and what the (injected) resolver answers for them.
NAMES = {"api.example.test": "203.0.113.7", "imds6.example.test": "fd00:ec2::254",
         "wire.example.test": "168.63.129.16", "fine.example.test": "203.0.113.9"}


def _lookup(host):
    if host in NAMES:
        return [ipaddress.ip_address(NAMES[host])]
    return host_addresses(host)  # literals are read without a lookup; a name here would be a test bug


def _decimal(address: str) -> str:
    return str(int(ipaddress.ip_address(address)))


BLOCKED_TARGETS = [
    "http://169.254.169.254/latest/meta-data/",
    "http://169.254.170.2/v2/credentials",
    "http://169.254.170.23/v1/credentials",
    "http://[fe80::1]/",
    "http://[fe80::1%25eth0]/",
    "http://[fd00:ec2::254]/latest/",
    "http://[fd00:ec2::23]/",
    "http://168.63.129.16/machine",
    "http://100.100.100.200/latest/meta-data/",
    "http://[fd00:c1::a9fe:a9fe]/opc/v2/",
    "http://192.0.0.192/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://METADATA.Google.Internal./computeMetadata/v1/",
    # IPv4 inside IPv6: mapped (dotted and hex), compatible, NAT64, 6to4
    "http://[::ffff:168.63.129.16]/",
    "http://[::ffff:a9fe:a9fe]/",
    "http://[::100.100.100.200]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[2002:a9fe:a9fe::]/",
    # numeric spellings: decimal, octal, hex, mixed, shortened
    f"http://{_decimal('169.254.169.254')}/",
    f"http://{_decimal('168.63.129.16')}/",
    f"http://{_decimal('100.100.100.200')}/",
    f"http://{_decimal('192.0.0.192')}/",
    "http://0251.0376.0251.0376/",
    "http://0xa9fea9fe/",
    "http://0xA9.0xFE.0xA9.0xFE/",
    "http://0x64.0144.100.0310/",
    "http://169.254.43518/",
    "http://169.16689662/",
    # names that resolve to blocked addresses
    "http://imds6.example.test/",
    "https://wire.example.test/",
]


@pytest.mark.parametrize("target", BLOCKED_TARGETS)
def test_a_redirect_to_a_blocked_address_is_refused(target):
    reason = redirect_refusal(SOURCE, target, resolve=_lookup)
    assert reason is not None and "cloud metadata address refused" in reason and target in reason


@pytest.mark.parametrize("target", [
    f"http://{int(ipaddress.ip_address('169.254.169.254')) + 2 ** 32}/",  # wraps to it in some clients
    "http://169.254.169.65790/",
    "http://0x1a9fea9fe/",
])
def test_a_numeric_host_outside_the_ipv4_range_is_refused(target):
    reason = redirect_refusal(SOURCE, target, resolve=_lookup)
    assert reason is not None and "outside the IPv4 range" in reason


@pytest.mark.parametrize("target", [
    "http://169.255.0.1/", "http://100.100.100.201/", "http://168.63.129.17/", "http://[fd00:ec2::1]/",
    "http://[::ffff:203.0.113.9]/", "http://fine.example.test/", "http://metadata.google.internal.example.test/",
])
def test_neighbours_of_blocked_addresses_are_followed(target):
    assert redirect_refusal(SOURCE, target, resolve=_lookup) is None


@pytest.mark.parametrize("url", ["http://0xa9fea9fe/latest/", "http://[::ffff:169.254.169.254]/",
                                 "http://metadata.google.internal/computeMetadata/v1/",
                                 "http://100.100.100.200/latest/meta-data/"])
def test_a_probe_to_a_blocked_address_is_an_error_before_connecting(url):
    s = suite("S", flow("F", step("imds", request(url), check("status_code", expected=200))))
    result = run_suites([s], RunOptions(), environ={})
    [imds] = result.suites[0].flow_runs[0].steps
    assert imds.status == "error"
    assert imds.error == f"request to a link-local or cloud metadata address refused: {url}"
    assert result.verdict == "failed"
