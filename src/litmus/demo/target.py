"""The demo target: a small shop API with an order flow, a chat assistant and a support (RAG) endpoint.

Standard library only, deterministic, and deliberately imperfect so the example suites in `probes/`
have real findings to report (see `docs/demo.md`). Endpoints (JSON unless said otherwise):

  GET  /health                     liveness
  POST /api/login                  {username, password} -> {token}; also X-Session-Id and a session cookie
  GET  /api/catalog/search?q=...   catalogue search; deliberately slow (SLOW_SEARCH_SECONDS)
  POST /api/orders                 {items: [{sku, quantity}]} -> 201 + Location; needs the login token
  GET  /api/orders/<id>            the order
  GET  /api/orders/<id>/status     pending -> packing -> ready, one step per poll
  GET  /api/orders/<id>/receipt    text/plain receipt ("Receipt no. RCPT-...")
  GET  /api/orders/<id>/invoice    text/html invoice page (for `xpath`; repeats the Vary header)
  GET  /api/catalog/feed.xml       application/xml catalogue feed with a namespace (for `xpath`)
  POST /chat                       {message} -> {reply}: a deterministic function of the message
  POST /support/ask                {order_id, question} -> {order, answer, sources} from the order index
  POST /v1/chat/completions        the chat assistant behind an OpenAI-compatible API, answering the history
                                   it is sent (and forgetting an order number at turn 3): with "stream": true,
                                   Server-Sent Events chunks ending in [DONE]; with "tools", a streamed
                                   get_order_status call for the order the message names
  POST /beta/chat/completions      the same on the beta deployment, which drops its streams mid-answer

The login token is accepted as `Authorization: Bearer <token>` or the `session` cookie; /chat,
/support/ask and the chat completions need `Authorization: Bearer <api token>`.

Run it alone:  python -m litmus.demo.target --port 0   (prints its URL; Ctrl-C stops it)
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from html import escape
from http.cookies import SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import escape as xml_escape
from xml.sax.saxutils import quoteattr


@dataclass(frozen=True)
class DemoCredentials:
    """What the target accepts. `litmus demo` passes the values it put in the environment."""

    user: str = "ada@example.com"
    password: str = "demo-password"
    api_token: str = "demo-api-token"

    @classmethod
    def from_environment(cls, environ: Mapping[str, str]) -> DemoCredentials:
        """The credentials the suites will send: the LITMUS_DEMO_* variables, else the defaults."""
        defaults = cls()
        return cls(
            user=environ.get("LITMUS_DEMO_USER", defaults.user),
            password=environ.get("LITMUS_DEMO_PASSWORD", defaults.password),
            api_token=environ.get("LITMUS_DEMO_TOKEN", defaults.api_token),
        )


# The environment variables the example suites read, with the documented values `litmus demo` uses
# when they are not already set (the suites read them as {{ env.* }} and {{ secrets.* }}).
DEMO_ENVIRONMENT = {
    "LITMUS_DEMO_USER": DemoCredentials.user,
    "LITMUS_DEMO_PASSWORD": DemoCredentials.password,
    "LITMUS_DEMO_TOKEN": DemoCredentials.api_token,
}

# The beta deployment's deliberate bug: its streams stop after this many content chunks, mid-answer.
BETA_CUT_AFTER_CHUNKS = 3
# The demo's assistant "model" as the chat completions API names it.
CHAT_MODEL = "demo-assistant-1"

# Over the 250 ms budget the orders suite gives the search: a deliberate finding.
SLOW_SEARCH_SECONDS = 0.5

# Prices as the (buggy) catalogue import left them: the coffee's price is the string "12.50", a
# deliberate finding for the orders suite's `type: number` check and schema.
CATALOGUE: dict[str, dict[str, Any]] = {
    "COF-250": {"sku": "COF-250", "name": "Single-origin coffee beans, 250 g", "unit_price": "12.50"},
    "MUG-01": {"sku": "MUG-01", "name": "Stoneware mug", "unit_price": 9.00},
    "FLT-02": {"sku": "FLT-02", "name": "Paper filters, pack of 100", "unit_price": 4.50},
}
STATUS_PROGRESSION = ("pending", "packing", "ready")

# The support assistant's order index. Order 1099 exists in the shop (and in the support suite's
# scenarios) but was never indexed: /support/ask answers 404 for it, a deliberate finding.
# The answer for 1042 invents a delivery date (5 December) the data does not support: a deliberate
# finding for the scenario-aware judges.
SUPPORT_INDEX: dict[int, dict[str, Any]] = {
    1042: {
        "order": {"id": 1042, "status": "delayed", "eta": "2026-12-03", "carrier": "DHL"},
        "answer": "I'm sorry for the wait. Order 1042 is delayed at the DHL depot and should now arrive on "
        "5 December. You don't need to do anything; we'll email you when it is out for delivery.",
    },
    1077: {
        "order": {"id": 1077, "status": "delivered", "eta": "2026-11-18", "carrier": "UPS"},
        "answer": "Good news: order 1077 was delivered by UPS on 18 November 2026. If you can't find the "
        "parcel, reply here and we'll open a trace with the carrier.",
    },
}


def assistant_reply(message: str) -> dict[str, Any]:
    """The chat assistant's reply: a pure function of the message, so judge verdicts can be replayed."""
    text = message.lower()
    if "refund" in text or "damaged" in text:
        topic = "refund"
        reply = (
            "I'm sorry your order arrived damaged. You can ask for a refund under Orders > Returns within 30 "
            "days of delivery. Once the item is back with us, the refund reaches your card within 14 days."
        )
    elif "ship" in text or "deliver" in text:
        # The deliberate slip: a boilerplate disclaimer the product team has banned.
        topic = "shipping"
        reply = (
            "As an AI language model, I cannot see live carrier rates. Standard shipping within the EU "
            "takes 3 to 5 working days and is free on orders over 40 EUR."
        )
    elif re.search(r"\b(hi|hello|hey)\b", text):
        topic = "greeting"
        reply = "Hello! I can help with orders, refunds and delivery questions. What can I do for you?"
    else:
        topic = "unknown"
        reply = "I can help with orders, refunds and delivery questions. Could you tell me a bit more?"
    return {"reply": reply, "topic": topic, "model": "demo-assistant-1"}


# The chat completions assistant reads only the last CONTEXT_WINDOW messages of the history it is sent: the
# deliberate finding of the conversation suite. From turn 3 on, the order number the customer gave at turn 1
# has left that window, and the assistant answers about the account's latest order instead.
CONTEXT_WINDOW = 3
LATEST_ORDER = 1077
ORDER_NUMBER = re.compile(r"\b(\d{4})\b")


def chat_completion_reply(messages: list[Any]) -> str:
    """The assistant's reply to a chat history: a pure function of the messages it is sent (it keeps no state),
    as the `/chat` assistant answers one message, plus the order-aware turns of the conversation suite."""
    window = messages[-CONTEXT_WINDOW:]
    message = window[-1]["content"]
    named = [int(number) for m in window if isinstance(m, dict)
             for number in ORDER_NUMBER.findall(str(m.get("content") or ""))]
    order = named[-1] if named else LATEST_ORDER
    text = message.lower()
    if "label" in text:
        return (f"I've emailed you the return label for order {order}. Drop the parcel at any DHL point; the "
                "refund follows within 14 days of it reaching us.")
    if "money" in text:
        return f"The refund for order {order} reaches your card within 14 days of the item coming back to us."
    if "send it back" in text:
        return f"Please send it back with the return label of order {order}: you'll find it under Orders > Returns."
    if ORDER_NUMBER.search(message):
        return f"Thanks, I've noted order {order}. What can I do for you?"
    return assistant_reply(message)["reply"]


@dataclass
class ShopState:
    """Everything the target remembers between requests (one per server), guarded by `lock`."""

    credentials: DemoCredentials
    lock: threading.Lock = field(default_factory=threading.Lock)
    tokens: set[str] = field(default_factory=set)
    orders: dict[str, dict[str, Any]] = field(default_factory=dict)
    polls: dict[str, int] = field(default_factory=dict)
    counter: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def next_number(self) -> int:
        with self.lock:
            return next(self.counter)


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


# -- HTML and XML pages, for the `xpath`, `header` and `body` examples ----------------------------


class MarkupPages:
    """The invoice page and the catalogue feed: markup bodies, and header lines that repeat."""

    MARKUP_ROUTES = (
        ("GET", r"/api/orders/(?P<order_id>ord_\w+)/invoice", "order_invoice"),
        ("GET", r"/api/catalog/feed\.xml", "catalog_feed"),
    )

    def order_invoice(self, body: bytes, order_id: str) -> None:
        order = self.find_order(order_id)
        lines = "".join(
            f'<li class="line" data-sku="{escape(line["sku"])}">{line["quantity"]} x {escape(line["name"])}</li>'
            for line in order["items"]
        )
        page = (
            '<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f"<title>Invoice for {order_id}</title></head><body><h1>Invoice</h1>"
            f'<ul id="lines">{lines}</ul>'
            f'<p>Total: <span id="total">{order["total"]:.2f}</span> {order["currency"]}</p>'
            f'<a rel="order" href="/api/orders/{order_id}">the order</a></body></html>'
        )
        self.send_markup(page, "text/html; charset=utf-8", [("Vary", "Accept"), ("Vary", "Cookie"),
                                                             ("Cache-Control", "private")])

    def catalog_feed(self, body: bytes) -> None:
        products = "".join(
            f"<product sku={quoteattr(item['sku'])}><name>{xml_escape(item['name'])}</name>"
            f'<p:price currency="EUR">{float(item["unit_price"]):.2f}</p:price></product>'
            for item in CATALOGUE.values()
        )
        feed = f'<?xml version="1.0" encoding="utf-8"?>\n<catalog xmlns:p="{PRICE_NAMESPACE}">{products}</catalog>\n'
        self.send_markup(feed, "application/xml", [("Cache-Control", "public, max-age=300")])

    def send_markup(self, text: str, content_type: str, header_lines: list[tuple[str, str]]) -> None:
        payload = text.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in [*self.extra_headers.items(), *header_lines]:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)


PRICE_NAMESPACE = "urn:litmus-demo:price"


class DemoHandler(MarkupPages, BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "LitmusDemo/1"
    # Streamed chunks are small writes: without TCP_NODELAY, Nagle holds them back ~40 ms.
    disable_nagle_algorithm = True
    server: DemoServer

    # Route table: (method, pattern) -> handler method name. Patterns match the path only.
    ROUTES = (
        ("GET", r"/health", "health"),
        ("POST", r"/api/login", "login"),
        ("GET", r"/api/catalog/search", "search"),
        ("POST", r"/api/orders", "create_order"),
        ("GET", r"/api/orders/(?P<order_id>ord_\w+)", "get_order"),
        ("GET", r"/api/orders/(?P<order_id>ord_\w+)/status", "order_status"),
        ("GET", r"/api/orders/(?P<order_id>ord_\w+)/receipt", "order_receipt"),
        ("POST", r"/chat", "chat"),
        ("POST", r"/support/ask", "support_ask"),
        ("POST", r"/v1/chat/completions", "chat_completions"),
        ("POST", r"/beta/chat/completions", "beta_chat_completions"),
        *MarkupPages.MARKUP_ROUTES,
    )

    def do_GET(self) -> None:
        self.dispatch()

    def do_POST(self) -> None:
        self.dispatch()

    # Other methods get the same JSON 404/405 errors as everything else.
    do_PUT = do_PATCH = do_DELETE = do_POST

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)

    # -- plumbing ---------------------------------------------------------------------------------

    def dispatch(self) -> None:
        url = urlsplit(self.path)
        self.query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        self.extra_headers: dict[str, str] = {"X-Request-Id": f"req-{self.server.state.next_number():06d}"}
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            for method, pattern, name in self.ROUTES:
                match = re.fullmatch(pattern, url.path)
                if match and method == self.command:
                    getattr(self, name)(body, **match.groupdict())
                    return
            if any(re.fullmatch(p, url.path) for _, p, _ in self.ROUTES):
                raise ApiError(405, "method_not_allowed", f"{self.command} is not allowed on {url.path}")
            raise ApiError(404, "not_found", f"no route for {url.path}")
        except ApiError as exc:
            self.send_json(exc.status, {"error": exc.code, "message": exc.message})

    def send_json(self, status: int, data: Any) -> None:
        self.send_body(status, json.dumps(data).encode(), "application/json; charset=utf-8")

    def send_body(self, status: int, payload: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in self.extra_headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def json_body(self, body: bytes) -> dict[str, Any]:
        try:
            data = json.loads(body or b"{}")
        except ValueError:
            raise ApiError(400, "bad_json", "the request body is not JSON") from None
        if not isinstance(data, dict):
            raise ApiError(400, "bad_json", "the request body must be a JSON object")
        return data

    def bearer(self) -> str | None:
        auth = self.headers.get("Authorization", "")
        return auth[7:] if auth.startswith("Bearer ") else None

    def require_login(self) -> None:
        cookie = SimpleCookie(self.headers.get("Cookie", ""))
        candidates = {self.bearer(), cookie["session"].value if "session" in cookie else None}
        with self.server.state.lock:
            if not candidates & self.server.state.tokens:
                raise ApiError(401, "unauthorized", "log in first: POST /api/login")

    def require_api_token(self) -> None:
        if self.bearer() != self.server.state.credentials.api_token:
            raise ApiError(401, "unauthorized", "send Authorization: Bearer <api token>")

    def find_order(self, order_id: str) -> dict[str, Any]:
        self.require_login()
        with self.server.state.lock:
            order = self.server.state.orders.get(order_id)
        if order is None:
            raise ApiError(404, "order_not_found", f"no order {order_id}")
        return order

    # -- endpoints --------------------------------------------------------------------------------

    def health(self, body: bytes) -> None:
        self.send_json(200, {"status": "ok"})

    def login(self, body: bytes) -> None:
        data = self.json_body(body)
        state = self.server.state
        if (data.get("username"), data.get("password")) != (state.credentials.user, state.credentials.password):
            raise ApiError(401, "invalid_credentials", "unknown user or wrong password")
        number = state.next_number()
        token = f"tok_{number:06d}"
        with state.lock:
            state.tokens.add(token)
        self.extra_headers["X-Session-Id"] = f"sess-{number:06d}"
        self.extra_headers["Set-Cookie"] = f"session={token}; Path=/; HttpOnly"
        self.send_json(200, {"token": token, "token_type": "Bearer", "expires_in": 3600})

    def search(self, body: bytes) -> None:
        time.sleep(SLOW_SEARCH_SECONDS)
        words = self.query.get("q", "").lower().split()
        results = [item for item in CATALOGUE.values() if all(w in item["name"].lower() for w in words)]
        self.send_json(200, {"query": self.query.get("q", ""), "results": results})

    def create_order(self, body: bytes) -> None:
        self.require_login()
        data = self.json_body(body)
        items = data.get("items")
        if not isinstance(items, list) or not items:
            raise ApiError(422, "no_items", "an order needs at least one item")
        lines = []
        for item in items:
            product = CATALOGUE.get(item.get("sku")) if isinstance(item, dict) else None
            quantity = item.get("quantity", 1) if isinstance(item, dict) else 0
            if product is None or not isinstance(quantity, int) or quantity < 1:
                raise ApiError(422, "bad_item", f"unknown sku or bad quantity: {item!r}")
            lines.append({**product, "quantity": quantity})
        total = round(sum(float(line["unit_price"]) * line["quantity"] for line in lines), 2)
        order_id = f"ord_{1000 + self.server.state.next_number()}"
        order = {
            "id": order_id,
            "status": STATUS_PROGRESSION[0],
            "items": lines,
            "total": total,
            "currency": "EUR",
            "client_ref": data.get("client_ref"),
        }
        with self.server.state.lock:
            self.server.state.orders[order_id] = order
            self.server.state.polls[order_id] = 0
        self.extra_headers["Location"] = f"/api/orders/{order_id}"
        self.send_json(201, order)

    def get_order(self, body: bytes, order_id: str) -> None:
        self.send_json(200, self.find_order(order_id))

    def order_status(self, body: bytes, order_id: str) -> None:
        order = self.find_order(order_id)
        with self.server.state.lock:
            polls = self.server.state.polls[order_id] = self.server.state.polls[order_id] + 1
            order["status"] = STATUS_PROGRESSION[min(polls - 1, len(STATUS_PROGRESSION) - 1)]
        self.send_json(200, {"id": order_id, "status": order["status"]})

    def order_receipt(self, body: bytes, order_id: str) -> None:
        order = self.find_order(order_id)
        lines = [f"Receipt no. RCPT-{int(order_id[4:]) * 7:06d} for order {order_id}"]
        lines += [f"{line['quantity']} x {line['name']} @ {float(line['unit_price']):.2f}" for line in order["items"]]
        lines.append(f"Total: {order['total']:.2f} {order['currency']}")
        self.send_body(200, ("\n".join(lines) + "\n").encode(), "text/plain; charset=utf-8")

    def chat(self, body: bytes) -> None:
        self.require_api_token()
        message = self.json_body(body).get("message")
        if not isinstance(message, str) or not message.strip():
            raise ApiError(422, "no_message", "send {\"message\": \"...\"}")
        self.send_json(200, assistant_reply(message))

    def chat_completions(self, body: bytes, cut_after: int | None = None) -> None:
        self.require_api_token()
        data = self.json_body(body)
        messages = data.get("messages")
        last = messages[-1] if isinstance(messages, list) and messages and isinstance(messages[-1], dict) else {}
        message = last.get("content")
        if not isinstance(message, str) or not message.strip():
            raise ApiError(400, "no_message", "send {\"messages\": [{\"role\": \"user\", \"content\": \"...\"}]}")
        order = ORDER_NUMBER.search(message)
        if data.get("tools") and order:
            delta = {"role": "assistant", "content": None, "tool_calls": [
                {"index": 0, "id": "call_demo_1", "type": "function",
                 "function": {"name": "get_order_status", "arguments": ""}}]}
            arguments = json.dumps({"order_id": int(order.group(1))})
            # The arguments arrive in pieces, as a real model streams them.
            deltas = [delta] + [{"tool_calls": [{"index": 0, "function": {"arguments": arguments[i:i + 8]}}]}
                                for i in range(0, len(arguments), 8)]
            finish, content = "tool_calls", None
        else:
            reply = chat_completion_reply(messages)
            words = re.findall(r"\S+\s*", reply)
            deltas = [{"role": "assistant", "content": ""}] + [{"content": word} for word in words]
            finish, content = "stop", reply
        # Tokens counted as words, the way the API reports them: in the reply, or in a last chunk of its own when
        # the request asks for it (`stream_options.include_usage`).
        sent = [m for m in messages if isinstance(m, dict)]
        usage = {"prompt_tokens": sum(len(str(m.get("content") or "").split()) for m in sent),
                 "completion_tokens": len((content or "").split()) + sum(len(d.get("tool_calls", ())) for d in deltas)}
        if not data.get("stream"):
            self.send_json(200, {"id": "chatcmpl-demo", "object": "chat.completion", "model": CHAT_MODEL, "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
                "usage": usage})
            return
        chunks = [{"id": "chatcmpl-demo", "object": "chat.completion.chunk", "model": CHAT_MODEL,
                   "choices": [{"index": 0, "delta": delta, "finish_reason": None}]} for delta in deltas]
        chunks.append({"id": "chatcmpl-demo", "object": "chat.completion.chunk", "model": CHAT_MODEL,
                       "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        if isinstance(data.get("stream_options"), dict) and data["stream_options"].get("include_usage"):
            chunks.append({"id": "chatcmpl-demo", "object": "chat.completion.chunk", "model": CHAT_MODEL,
                           "choices": [], "usage": usage})
        frames = [f"data: {json.dumps(chunk)}\n\n".encode() for chunk in chunks] + [b"data: [DONE]\n\n"]
        self.send_event_stream(frames if cut_after is None else frames[: cut_after + 1], cut=cut_after is not None)

    def beta_chat_completions(self, body: bytes) -> None:
        self.chat_completions(body, cut_after=BETA_CUT_AFTER_CHUNKS)

    def send_event_stream(self, frames: list[bytes], cut: bool = False) -> None:
        """Server-Sent Events, one HTTP chunk per frame; `cut` drops the connection after the last one."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in self.extra_headers.items():
            self.send_header(name, value)
        self.end_headers()
        for frame in frames:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
            self.wfile.flush()
        if cut:
            self.close_connection = True  # no last chunk: the client sees the body end mid-stream
        else:
            self.wfile.write(b"0\r\n\r\n")

    def support_ask(self, body: bytes) -> None:
        self.require_api_token()
        data = self.json_body(body)
        entry = SUPPORT_INDEX.get(data.get("order_id"))
        if entry is None:
            raise ApiError(404, "order_not_indexed", f"order {data.get('order_id')!r} is not in the support index")
        self.send_json(200, {**entry, "sources": [f"orders/{entry['order']['id']}"]})


class DemoServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], credentials: DemoCredentials, verbose: bool = False):
        super().__init__(address, DemoHandler)
        self.state = ShopState(credentials)
        self.verbose = verbose

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"


def start_demo_target(
    credentials: DemoCredentials | None = None, host: str = "127.0.0.1", port: int = 0
) -> tuple[DemoServer, str]:
    """Start the target in a daemon thread (port 0 = a free one). Stop with `stop_demo_target(server)`."""
    server = DemoServer((host, port), credentials or DemoCredentials())
    threading.Thread(target=server.serve_forever, name="litmus-demo-target", daemon=True).start()
    return server, server.base_url


def stop_demo_target(server: DemoServer) -> None:
    server.shutdown()
    server.server_close()


@contextmanager
def running_demo_target(credentials: DemoCredentials | None = None) -> Iterator[str]:
    """`with running_demo_target() as base_url:` the target serves for the block's duration."""
    server, base_url = start_demo_target(credentials)
    try:
        yield base_url
    finally:
        stop_demo_target(server)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m litmus.demo.target", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default 0: a free one)")
    parser.add_argument("--verbose", action="store_true", help="log every request to stderr")
    args = parser.parse_args(argv)
    credentials = DemoCredentials.from_environment(os.environ)
    server = DemoServer(("127.0.0.1", args.port), credentials, verbose=args.verbose)
    print(server.base_url, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
