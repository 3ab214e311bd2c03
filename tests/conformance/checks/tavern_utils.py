"""Ports of the Tavern example suites' `verify_response_with` functions (as `type: python` checks)."""


def message_says_hello(response, context):
    """Tavern's testing_utils.message_says_hello: the `message` field greets."""
    message = response.json().get("message", "")
    if not message.startswith("hello"):
        return f"message is {message!r}, not a greeting"
    return True


def has_keys(response, context, keys):
    """A common Tavern helper shape: these keys are all present (extra_kwargs -> args)."""
    body = response.json()
    return [{"path": f"$.{key}", "expected": "present", "actual": None, "reason": f"no key {key}"}
            for key in keys if key not in body]
