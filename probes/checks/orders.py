"""Checks in Python for probes/orders.yaml (`type: python`): loaded by path, called per step."""


def total_matches(response, context, tolerance=0.005):
    """The order's total is the sum of its lines (unit price x quantity), within `tolerance`."""
    order = response.json()
    lines = order.get("items") or []
    computed = round(sum(float(line["unit_price"]) * line["quantity"] for line in lines), 2)
    if abs(computed - order["total"]) <= tolerance:
        return True
    return [{"path": "$.total", "expected": computed, "actual": order["total"],
             "reason": f"the lines add up to {computed:.2f}, the order says {order['total']}"}]
