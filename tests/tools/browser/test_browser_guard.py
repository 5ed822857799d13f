"""``open`` reaches only public http(s) addresses unless the config allows others, redirects and rebinding included."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable

import pytest

from harmony_chat.tools.browser import BrowserTool
from harmony_chat.tools.browser.guard import AddressGuard, BlockedURL, non_public_kind, split_url
from tests.tools.browser.conftest import PUBLIC_ADDRESS, RoutedNetwork, call
from tests.tools.browser.web_server import WebServer

ToolFactory = Callable[..., BrowserTool]


def names(table: dict[str, list[str]]) -> Callable[[str, int], list[str]]:
    """A resolver from a table; unknown names fail like a DNS miss."""

    def resolve(host: str, port: int) -> list[str]:
        if host not in table:
            raise BlockedURL(f"the host name {host!r} could not be resolved (test)")
        return table[host]

    return resolve


def open_url(tool: BrowserTool, url: str) -> tuple[str, str]:
    result = call(tool, "browser.open", json.dumps({"id": url}))
    return result.status, result.text


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private-network"),
        ("192.168.0.10", "private-network"),
        ("172.16.5.4", "private-network"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("0.0.0.0", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("100.64.0.1", "reserved (non-public)"),
        ("fd00::1", "private-network"),
        ("::ffff:127.0.0.1", "loopback"),
        ("2002:7f00:1::", "loopback"),  # 6to4 wrapping 127.0.0.1
        (PUBLIC_ADDRESS, None),
        ("2606:4700:4700::1111", None),
    ],
)
def test_which_addresses_are_public(address: str, kind: str | None) -> None:
    assert non_public_kind(ipaddress.ip_address(address)) == kind


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("file:///etc/passwd", "only http and https URLs can be opened, not file:"),
        ("ftp://example.com/x", "not ftp:"),
        ("javascript:alert(1)", "not javascript:"),
        ("/etc/passwd", "a URL without a scheme"),
        ("http:///nohost", "the URL has no host"),
        ("http://[::1", "not a valid URL"),
    ],
)
def test_only_http_urls(url: str, expected: str) -> None:
    with pytest.raises(BlockedURL) as raised:
        split_url(url)
    assert expected in str(raised.value)


def test_file_urls_are_refused_even_when_private_addresses_are_allowed(make_tool: ToolFactory) -> None:
    status, text = open_url(make_tool(allow_private=True), "file:///etc/passwd")
    assert status == "failed" and "only http and https URLs can be opened, not file:" in text
    assert "root:" not in text


def test_loopback_is_refused_unless_allowed(make_tool: ToolFactory, web: WebServer) -> None:
    before = web.web.hits["/secret"]
    for url in (f"{web.url}/secret", f"http://localhost:{web.port}/secret", f"http://[::1]:{web.port}/secret"):
        status, text = open_url(make_tool(allow_private=False), url)
        assert status == "failed", text
        assert "is a loopback address" in text and "allow_private = true" in text
    assert web.web.hits["/secret"] == before  # refused before connecting
    status, text = open_url(make_tool(allow_private=True), f"{web.url}/secret")
    assert status == "done" and "the secret is 42" in text


def test_cloud_metadata_and_private_names_are_refused(make_tool: ToolFactory) -> None:
    resolver = names({"intranet.example": ["10.0.0.7"], "mixed.example": [PUBLIC_ADDRESS, "192.168.1.1"]})
    tool = make_tool(allow_private=False, resolver=resolver)
    assert "169.254.169.254 is a link-local address" in open_url(tool, "http://169.254.169.254/latest/meta-data")[1]
    assert "'intranet.example' resolves to 10.0.0.7" in open_url(tool, "http://intranet.example/")[1]
    # Every address of a name is checked, not just the first.
    assert "'mixed.example' resolves to 192.168.1.1" in open_url(tool, "http://mixed.example/")[1]
    assert "could not be resolved" in open_url(tool, "http://nowhere.example/")[1]


def test_a_public_page_that_redirects_to_loopback_is_refused(make_tool: ToolFactory, web: WebServer) -> None:
    network = RoutedNetwork(web.port)
    resolver = names({"news.example": [PUBLIC_ADDRESS], "internal.example": ["127.0.0.1"]})
    tool = make_tool(allow_private=False, resolver=resolver, network=network)
    status, text = open_url(tool, "http://news.example/kelp")  # the fake internet reaches the public name
    assert status == "done" and "[0] Kelp forests (http://news.example/kelp)" in text
    before = web.web.hits["/secret"]
    for target in (f"{web.url}/secret", f"http://internal.example:{web.port}/secret"):
        status, text = open_url(tool, f"http://news.example/go?to={target}")
        assert status == "failed" and "loopback address" in text, text
    assert web.web.hits["/secret"] == before
    assert all(host == PUBLIC_ADDRESS for host, _port in network.dialled)  # nothing else was ever dialled


def test_a_name_that_rebinds_to_loopback_after_the_check_is_not_dialled(make_tool: ToolFactory, web: WebServer) -> None:
    answers = iter([[PUBLIC_ADDRESS], ["127.0.0.1"]])  # the check sees a public address, the dial a loopback one

    def rebinding(host: str, port: int) -> list[str]:
        return next(answers, ["127.0.0.1"])

    network = RoutedNetwork(web.port)
    tool = make_tool(allow_private=False, resolver=rebinding, network=network)
    status, text = open_url(tool, f"http://rebind.example:{web.port}/secret")
    assert status == "failed" and "'rebind.example' resolves to 127.0.0.1, which is a loopback address" in text
    assert network.dialled == []


def test_the_guard_allows_everything_resolvable_when_private_is_allowed() -> None:
    guard = AddressGuard(allow_private=True, resolver=names({"box.lan": ["192.168.1.5"]}))
    assert guard.vet("box.lan", 80) == ["192.168.1.5"]
    assert guard.vet("127.0.0.1", 80) == ["127.0.0.1"]
    with pytest.raises(BlockedURL):
        guard.check_url("file:///etc/passwd")


REFUSAL_END = (
    ", and this browser only opens public internet addresses (the config's [tools.browser] allow_private = true"
    " allows them)"
)


@pytest.mark.parametrize(
    ("host", "said"),
    [
        ("0.0.0.0", "0.0.0.0 is an unspecified address"),
        ("127.0.0.1", "127.0.0.1 is a loopback address"),
        ("10.1.2.3", "10.1.2.3 is a private-network address"),
        ("169.254.169.254", "169.254.169.254 is a link-local address"),
        ("224.0.0.1", "224.0.0.1 is a multicast address"),
        ("100.64.0.1", "100.64.0.1 is a reserved (non-public) address"),
        ("[::]", ":: is an unspecified address"),
        ("intranet.example", "'intranet.example' resolves to 10.0.0.7, which is a private-network address"),
        ("nothing.example", "'nothing.example' resolves to 0.0.0.0, which is an unspecified address"),
    ],
)
def test_refusals_read_as_sentences(host: str, said: str) -> None:
    guard = AddressGuard(resolver=names({"intranet.example": ["10.0.0.7"], "nothing.example": ["0.0.0.0"]}))
    with pytest.raises(BlockedURL) as raised:
        guard.vet(host, 80)
    assert str(raised.value) == f"refused: {said}{REFUSAL_END}"
