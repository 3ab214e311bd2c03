"""The cost of metering every step: reading the usage a response reports (`litmus.usage.meter`).

    python3 bench/usage_bench.py                          # a 10 MB JSON body, a 20,000-event stream
    python3 bench/usage_bench.py --items 400000 --events 100000

Every step is metered, whether or not it has a `tokens` or `cost` check, so a large response must not be
parsed for it: a body is parsed only when it holds the bytes `"usage"`, a stream's events only where they
may hold usage. Prints the time to meter a large JSON body without usage (against `json.loads` of the same
body, what parsing it would cost), the same body with a `usage` object, and an OpenAI stream of N content
chunks ending in a usage chunk. This prints figures; it is not a timed test.
"""

from __future__ import annotations

import argparse
import json
import time

from litmus.errors import Position
from litmus.model import Request, Stream
from litmus.response import Response
from litmus.run.stream import StreamData, StreamedResponse
from litmus.usage import Price, meter

PRICING = {"shop": Price(input_per_mtok=1, output_per_mtok=4)}


def best_ms(action, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return min(times)


def body(items: int, usage: bool) -> Response:
    document = {"items": [{"id": i, "name": "x" * 20} for i in range(items)]}
    if usage:
        document.update(model="shop", usage={"prompt_tokens": 10, "completion_tokens": 20})
    data = json.dumps(document).encode()
    return Response(status=200, headers={"Content-Type": "application/json"}, body=data, elapsed_ms=1.0)


def stream(events: int) -> StreamedResponse:
    data = StreamData("openai")
    chunk = json.dumps({"model": "shop", "choices": [{"index": 0, "delta": {"content": "word "}}]})
    data.received.extend((None, chunk, None) for _ in range(events))
    data.received.append((None, json.dumps({"model": "shop", "choices": [],
                                            "usage": {"prompt_tokens": 10, "completion_tokens": events}}), None))
    return StreamedResponse(status=200, headers={}, body=b"", elapsed_ms=1.0, stream=data)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=200_000, help="items of the JSON body (200,000: ~10 MB)")
    parser.add_argument("--events", type=int, default=20_000, help="content chunks of the stream")
    args = parser.parse_args()
    plain = Request(Position("bench"))
    without = body(args.items, usage=False)
    print(f"JSON body of {len(without.body) / 1e6:.1f} MB without usage: "
          f"{best_ms(lambda: meter(without, plain, PRICING)):.1f} ms to meter, "
          f"{best_ms(lambda: json.loads(without.body), 3):.1f} ms to parse")
    with_usage = body(args.items, usage=True)
    print(f"the same body with usage: {best_ms(lambda: meter(with_usage, plain, PRICING), 1):.1f} ms "
          "(parsed once; the checks that read JSON reuse it)")
    streamed = stream(args.events)
    request = Request(Position("bench"), stream=Stream(Position("bench"), format="openai"))
    print(f"OpenAI stream of {args.events + 1:,} events: {best_ms(lambda: meter(streamed, request, PRICING)):.1f} ms")


if __name__ == "__main__":
    main()
