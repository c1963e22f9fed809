"""`joinops serve --metrics-port N`: one scrape has the post-ack process's counters too. The
request message is posted by the post-ack process (the work after the ack), not by the acking
one that serves /metrics: prometheus_client's multiprocess mode sums the two. (Slack answers a 429
now and then; the bot waits it out and retries, as slack_sdk's handler does, and counts it.)"""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.error
import urllib.request

from slacksim.signing import deliver, slash_command_body
from tests.bot.harness import CHANNEL, REQUESTER, SECRET, buttons, until
from tests.bot.served import free_port, healthy
from tests.support.clusters import write_config

FAILED_POSTS = 'joinops_slack_api_errors_total{method="chat.postMessage"}'


def scrape(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return str(answer.read().decode())
    except (urllib.error.URLError, OSError):
        return ""


def failed_posts(text: str) -> float:
    return sum(
        float(line.rsplit(" ", 1)[1]) for line in text.splitlines() if line.startswith(FAILED_POSTS)
    )


def test_a_request_recorded_by_the_post_ack_process_shows_on_the_bots_metrics(make_bot, tmp_path):
    bot = make_bot()  # its check worker answers the served bot's rule check
    port, metrics_port = free_port(), free_port()
    env = {
        **os.environ,
        "JOINOPS_CONFIG": str(write_config(bot.world, tmp_path, **bot.overrides)),
        "REDIS_URL": bot.redis_url,
        "SLACK_BOT_TOKEN": bot.sim.token,
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": bot.sim.api_url,
    }
    env.pop("SLACK_APP_TOKEN", None)
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    scratch = tmp_path / "tmp"  # where serve makes its metrics directory (and removes it)
    scratch.mkdir()
    env["TMPDIR"] = str(scratch)
    args = ["--http", "--host", "127.0.0.1", "--port", str(port)]
    served = subprocess.Popen(
        [sys.executable, "-m", "cli", "serve", *args, "--metrics-port", str(metrics_port)],
        env=env,
        stdout=(tmp_path / "serve.log").open("wb"),
        stderr=subprocess.STDOUT,
    )
    metrics = f"http://127.0.0.1:{metrics_port}/metrics"
    try:
        until(lambda: healthy(f"http://127.0.0.1:{port}/healthz") or served.poll() is not None, 60)
        assert served.poll() is None, (tmp_path / "serve.log").read_text()
        until(lambda: scrape(metrics) != "", 30)
        assert failed_posts(scrape(metrics)) == 0
        # Slack answers the request message's first post 429 (it is retried, and counted)
        bot.sim.faults.add("chat.postMessage", status=429, retry_after=1)
        url = bot.sim.response_url("ask", channel=CHANNEL, user=REQUESTER)
        body = slash_command_body(
            text="a-w-1 from clusterA to clusterB",
            user_id=REQUESTER,
            channel_id=CHANNEL,
            response_url=url,
        )
        assert deliver(f"http://127.0.0.1:{port}/slack/events", body, SECRET).status == 200
        bot.sim.wait_for(lambda: [m for m in bot.messages() if buttons(m)], 60)
        until(lambda: failed_posts(scrape(metrics)) == 1, 30)
    finally:
        served.terminate()
        served.wait(150)
    assert list(scratch.iterdir()) == []  # nothing left behind by the stop
