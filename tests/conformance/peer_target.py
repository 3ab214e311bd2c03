"""The local target the conformance corpus runs against: routes shaped like the ones the peers' own
suites test (Hurl's integration server, the JSONPlaceholder API Step CI's examples use, Tavern's
example user/token service). Everything is served from a `support.target.Target` on 127.0.0.1."""

from __future__ import annotations

import hashlib
import json

from support.target import Target


class HeaderLines(list):
    """Header lines for a route, with repeats (`Target` iterates `.items()`)."""

    def items(self):
        return iter(self)


ASSERT_JSON = {
    "count": 5, "success": False, "errors": [{"id": "error1"}, {"id": "error2"}], "warnings": [],
    "duration": 1.5, "tags": ["test"], "nullable": None, "text": "ok", "empty": "", "unicode": "café",
    "big": 10000000000, "nested": {"a": {"b": 1}},
}
BOOK_XML = ("<?xml version='1.0'?>\n<!-- both namespace prefixes are available throughout -->\n"
            "<bk:book xmlns:bk='urn:loc.gov:books' xmlns:isbn='urn:ISBN:0-395-36341-6'>"
            "<bk:title>Cheaper by the Dozen</bk:title><isbn:number>1568491379</isbn:number></bk:book>")
EXAMPLE_HTML = ("<!doctype html><html><head><title>Example Domain</title></head><body><div><h1>Example</h1>"
                "<p>This domain is for use in illustrative examples in documents.</p>"
                "<p><a href='https://www.iana.org/domains/example'>More information...</a></p></div></body></html>")
HELLO = b"Hello World!"
HELLO_SHA256 = hashlib.sha256(HELLO).hexdigest()
POST = {"userId": 1, "id": 1, "title": "sunt aut facere repellat provident", "body": "quia et suscipit recusandae",
        "comments": [{"id": 1}, {"id": 2}]}
USER = {"user": "joebloggs", "role": "admin", "id": 42, "token": "c2VjcmV0", "score": 98.6, "active": True,
        "items": [1, 2], "meta": {"plan": "pro"}, "value": 3.14159, "email": "joe@example.com",
        "message": "hello joe"}


def serve(target: Target) -> None:
    json_type = {"Content-Type": "application/json; charset=utf-8"}
    target.json("/assert-json", ASSERT_JSON)
    target.route("/assert-header", lambda req: (200, HeaderLines([
        ("Content-Type", "text/html; charset=utf-8"), ("X-Fruit", "Banana"), ("X-Fruit", "Lemon"),
        ("X-Fruit", "Grape Fruit"), ("ETag", 'W/"33a64df551"'), ("Cache-Control", "max-age=60")]), b"<p>ok</p>"))
    target.route("/cookies/set", lambda req: (200, HeaderLines([
        ("Content-Type", "text/plain"),
        ("Set-Cookie", "LSID=DQAAAKEaem_vYg; Expires=Wed, 13 Jan 2021 22:23:01 GMT; Secure; HttpOnly; Path=/accounts; "
                       "SameSite=Lax"),
        ("Set-Cookie", "HSID=AYQEVnDKrdst; Domain=localhost; Expires=Wed, 13 Jan 2021 22:23:01 GMT; HttpOnly; Path=/"),
        ("Set-Cookie", "SSID=Ap4PGTEq; Domain=localhost; Expires=Wed, 13 Jan 2021 22:23:01 GMT; Secure; HttpOnly; "
                       "Path=/"),
        ("Set-Cookie", "theme=light; Max-Age=31536000; Path=/; SameSite=Strict")]), b""))
    target.text("/assert-xpath-xml", BOOK_XML, content_type="application/xml")
    target.text("/assert-xpath-html", EXAMPLE_HTML, content_type="text/html; charset=UTF-8")
    target.text("/hello", HELLO, content_type="text/plain; charset=utf-8")
    target.route("/posts/1", lambda req: (200, {**json_type, "X-Request-Id": "req-1"}, json.dumps(POST).encode()))
    target.route("/login", lambda req: (200, HeaderLines([
        *json_type.items(), ("Set-Cookie", "session=abc123; Path=/; HttpOnly")]), b'{"ok": true}'))
    target.route("/users/joebloggs", lambda req: (200, json_type, json.dumps(USER).encode()))
