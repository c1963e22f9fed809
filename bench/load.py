"""The ack benchmark's load: signed slash commands, N at once, each timed to its HTTP response.

Runs in a process of its own (see `bench.ack`), so that its clock is not held up by the
simulated clusters and Slack that share the benchmark's process. Standard library plus
`slacksim.signing` only.
"""

from __future__ import annotations

import http.client
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import urlsplit

from slacksim.signing import sign, slash_command_body

TIMEOUT = 30.0  # seconds one request may take (Slack itself gives up after 3)


@dataclass(frozen=True)
class Answer:
    seconds: float  # from opening the connection to the last byte of the response
    status: int  # HTTP status; 0 when the connection failed
    body: bytes


def send(url: str, body: bytes, secret: str) -> Answer:
    """POST one signed body on a fresh connection, as Slack does."""
    parts = urlsplit(url)
    headers = sign(body, secret)
    started = time.perf_counter()
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=TIMEOUT)
    try:
        connection.request("POST", parts.path, body=body, headers=headers)
        response = connection.getresponse()
        data = response.read()
        return Answer(time.perf_counter() - started, response.status, data)
    except OSError as e:
        return Answer(time.perf_counter() - started, 0, str(e).encode())
    finally:
        connection.close()


def fire(
    url: str, secret: str, texts: list[str], concurrency: int, response_url: str
) -> list[Answer]:
    """Send `/join TEXT` for every text, `concurrency` at a time; answers in sending order."""
    bodies = [slash_command_body(text=t, response_url=response_url) for t in texts]
    with ThreadPoolExecutor(concurrency, thread_name_prefix="sender") as pool:
        return list(pool.map(lambda body: send(url, body, secret), bodies))
