"""The demo target behaves as docs/demo.md says, over real HTTP on 127.0.0.1."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
import requests

from litmus.demo.target import (
    DEMO_ENVIRONMENT,
    SLOW_SEARCH_SECONDS,
    DemoCredentials,
    assistant_reply,
    running_demo_target,
)

CREDENTIALS = DemoCredentials(user="tess@example.com", password="s3cret-pass", api_token="tok-for-tests")


@pytest.fixture(scope="module")
def base_url():
    with running_demo_target(CREDENTIALS) as url:
        yield url


def login(base_url: str, session: requests.Session | None = None) -> str:
    response = (session or requests).post(
        f"{base_url}/api/login", json={"username": CREDENTIALS.user, "password": CREDENTIALS.password}
    )
    assert response.status_code == 200
    return response.json()["token"]


def place_order(base_url: str, token: str) -> requests.Response:
    return requests.post(
        f"{base_url}/api/orders",
        headers={"Authorization": f"Bearer {token}"},
        json={"items": [{"sku": "COF-250", "quantity": 2}, {"sku": "MUG-01", "quantity": 1}], "client_ref": "t-1"},
    )


def test_health(base_url):
    response = requests.get(f"{base_url}/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response.headers["X-Request-Id"].startswith("req-")


def test_login_gives_token_session_header_and_cookie(base_url):
    response = requests.post(
        f"{base_url}/api/login", json={"username": CREDENTIALS.user, "password": CREDENTIALS.password}
    )
    body = response.json()
    assert body["token_type"] == "Bearer" and body["token"].startswith("tok_")
    assert response.headers["X-Session-Id"].startswith("sess-")
    assert response.cookies["session"] == body["token"]


def test_wrong_password_is_401_without_token(base_url):
    response = requests.post(f"{base_url}/api/login", json={"username": CREDENTIALS.user, "password": "nope"})
    assert response.status_code == 401
    assert response.json()["error"] == "invalid_credentials"
    assert "token" not in response.json()
    assert CREDENTIALS.password not in response.text


def test_orders_need_login(base_url):
    assert requests.post(f"{base_url}/api/orders", json={"items": []}).status_code == 401
    assert place_order(base_url, "tok_forged").status_code == 401


def test_order_flow_with_header_token(base_url):
    token = login(base_url)
    created = place_order(base_url, token)
    assert created.status_code == 201
    order = created.json()
    assert created.headers["Location"] == f"/api/orders/{order['id']}"
    assert order["status"] == "pending" and order["total"] == 34.0 and order["currency"] == "EUR"
    # The deliberate bug: the coffee's price is a string.
    assert [item["unit_price"] for item in order["items"]] == ["12.50", 9.0]

    auth = {"Authorization": f"Bearer {token}"}
    read_back = requests.get(base_url + created.headers["Location"], headers=auth)
    assert read_back.json()["id"] == order["id"]

    statuses = [requests.get(f"{base_url}/api/orders/{order['id']}/status", headers=auth).json()["status"]
                for _ in range(4)]
    assert statuses == ["pending", "packing", "ready", "ready"]

    receipt = requests.get(f"{base_url}/api/orders/{order['id']}/receipt", headers=auth)
    assert receipt.headers["Content-Type"].startswith("text/plain")
    assert f"for order {order['id']}" in receipt.text
    assert "Total: 34.00 EUR" in receipt.text
    assert receipt.text.startswith("Receipt no. RCPT-")


def test_session_cookie_authenticates_too(base_url):
    session = requests.Session()
    login(base_url, session)
    created = session.post(f"{base_url}/api/orders", json={"items": [{"sku": "FLT-02"}]})
    assert created.status_code == 201
    assert session.get(f"{base_url}/api/orders/{created.json()['id']}").status_code == 200


def test_bad_requests_are_clear_errors(base_url):
    token = login(base_url)
    auth = {"Authorization": f"Bearer {token}"}
    unknown_sku = requests.post(f"{base_url}/api/orders", headers=auth, json={"items": [{"sku": "NOPE"}]})
    assert unknown_sku.status_code == 422 and unknown_sku.json()["error"] == "bad_item"
    not_json = requests.post(f"{base_url}/api/orders", headers=auth, data="{oops")
    assert not_json.status_code == 400
    assert requests.get(f"{base_url}/api/orders/ord_99999", headers=auth).status_code == 404
    assert requests.get(f"{base_url}/nowhere").status_code == 404
    assert requests.get(f"{base_url}/chat").status_code == 405
    assert requests.delete(f"{base_url}/api/orders").json()["error"] == "method_not_allowed"


def test_search_is_deliberately_slow(base_url):
    started = time.perf_counter()
    response = requests.get(f"{base_url}/api/catalog/search", params={"q": "coffee"})
    assert time.perf_counter() - started >= SLOW_SEARCH_SECONDS
    assert [item["sku"] for item in response.json()["results"]] == ["COF-250"]


def test_chat_needs_the_api_token(base_url):
    assert requests.post(f"{base_url}/chat", json={"message": "hi"}).status_code == 401


@pytest.mark.parametrize(
    ("message", "topic", "phrase"),
    [
        ("My mug arrived damaged. Can I get a refund?", "refund", "within 14 days"),
        ("How long does delivery to Germany take?", "shipping", "As an AI language model"),
        ("Hello there", "greeting", "Hello!"),
        ("What is the meaning of life?", "unknown", "Could you tell me a bit more?"),
    ],
)
def test_chat_reply_is_a_function_of_the_message(base_url, message, topic, phrase):
    auth = {"Authorization": f"Bearer {CREDENTIALS.api_token}"}
    replies = [requests.post(f"{base_url}/chat", headers=auth, json={"message": message}).json() for _ in range(2)]
    assert replies[0] == replies[1] == assistant_reply(message)
    assert replies[0]["topic"] == topic and phrase in replies[0]["reply"]


def test_chat_completions_answer_the_history_sent_and_lose_the_order_at_turn_3(base_url):
    auth = {"Authorization": f"Bearer {CREDENTIALS.api_token}"}

    def reply(*user_and_assistant: str) -> str:
        roles = ["user", "assistant"] * len(user_and_assistant)
        messages = [{"role": "system", "content": "You are the shop's assistant."}]
        messages += [{"role": role, "content": text} for role, text in zip(roles, user_and_assistant, strict=False)]
        answer = requests.post(f"{base_url}/v1/chat/completions", headers=auth,
                               json={"model": "demo-assistant-1", "messages": messages})
        return answer.json()["choices"][0]["message"]["content"]

    first = reply("Hi, I need help with my order 1042.")
    assert first == "Thanks, I've noted order 1042. What can I do for you?"
    second = reply("Hi, I need help with my order 1042.", first, "Can I get a refund? It arrived damaged.")
    # Turn 2 still sees turn 1; at turn 3 the order number has left the assistant's window of three messages.
    assert "1042" in reply("Hi, I need help with my order 1042.", first, "How do I send it back?")
    forgot = reply("Hi, I need help with my order 1042.", first, "Can I get a refund? It arrived damaged.", second,
                   "How do I send it back?")
    assert "order 1077" in forgot and "1042" not in forgot
    # No server state: the same history gets the same reply, whatever was asked in between.
    assert reply("Hi, I need help with my order 1042.") == first


def test_support_answers_from_the_index_and_misses_1099(base_url):
    auth = {"Authorization": f"Bearer {CREDENTIALS.api_token}"}
    delayed = requests.post(f"{base_url}/support/ask", headers=auth, json={"order_id": 1042, "question": "?"})
    assert delayed.json()["order"] == {"id": 1042, "status": "delayed", "eta": "2026-12-03", "carrier": "DHL"}
    assert "5 December" in delayed.json()["answer"]  # the deliberate hallucination
    assert delayed.json()["sources"] == ["orders/1042"]
    delivered = requests.post(f"{base_url}/support/ask", headers=auth, json={"order_id": 1077})
    assert delivered.json()["order"]["status"] == "delivered"
    missing = requests.post(f"{base_url}/support/ask", headers=auth, json={"order_id": 1099})
    assert missing.status_code == 404 and missing.json()["error"] == "order_not_indexed"


def test_credentials_from_environment_fall_back_to_the_documented_defaults():
    assert DemoCredentials.from_environment({}) == DemoCredentials()
    assert DemoCredentials.from_environment(DEMO_ENVIRONMENT) == DemoCredentials()
    custom = DemoCredentials.from_environment({"LITMUS_DEMO_TOKEN": "abc"})
    assert custom.api_token == "abc" and custom.user == DemoCredentials().user


def test_module_entry_point_prints_its_url_and_serves():
    process = subprocess.Popen(
        [sys.executable, "-m", "litmus.demo.target", "--port", "0"], stdout=subprocess.PIPE, text=True
    )
    try:
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        assert requests.get(f"{url}/health", timeout=5).json() == {"status": "ok"}
    finally:
        process.terminate()
        process.wait(timeout=5)
