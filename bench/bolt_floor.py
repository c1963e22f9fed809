"""The ack benchmark's baseline: a bare bolt app whose `/join` listener only acks.

Served the way `joinops serve --http` serves the bot (waitress, the same backlog and threads), so
the difference between the two is what joinops adds before its ack: signature check, parsing,
routing. Run as `python -m bench.bolt_floor --port PORT` with SLACK_SIGNING_SECRET, SLACK_BOT_TOKEN
and SLACK_API_URL set.
"""

from __future__ import annotations

import argparse
import os
import signal
from types import FrameType
from typing import Any

from slack_bolt import Ack, App
from slack_bolt.adapter.wsgi import SlackRequestHandler
from slack_sdk import WebClient
from waitress.server import create_server

from bot.serve import BACKLOG, HTTP_THREADS


def build() -> App:
    # The same simulated Slack as the bot: bolt asks it `auth.test` once per process.
    client = WebClient(token=os.environ["SLACK_BOT_TOKEN"], base_url=os.environ["SLACK_API_URL"])
    app = App(client=client, signing_secret=os.environ["SLACK_SIGNING_SECRET"])

    @app.command("/join")
    def join(ack: Ack) -> None:
        ack()

    return app


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.bolt_floor")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--threads", type=int, default=HTTP_THREADS)
    args = parser.parse_args()
    handler = SlackRequestHandler(build())
    server: Any = create_server(
        handler, host="127.0.0.1", port=args.port, threads=args.threads, backlog=BACKLOG
    )

    def stop(signum: int, frame: FrameType | None) -> None:
        raise SystemExit(0)  # out of waitress's loop, in the main thread

    signal.signal(signal.SIGTERM, stop)
    server.run()


if __name__ == "__main__":
    main()
