"""Clicks' work runs in a bounded pool of its own (`bot.click_pool`), never on bolt's listener
threads: a burst of impatient clicks while every approval waits for its rules' re-check leaves
`/join help` answering as ever, and the clicks past the pool's bound are told, at once, to try
again in a minute."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from bot.click_pool import BOUND, RUNNING
from joinops.asking import checks_queue
from joinops.requests.lifecycle import State
from tests.bot.harness import ack_text, until
from tests.support.check_worker import CheckWorker

BURST = 100
BUSY = "I am busy with"


def test_100_clicks_waiting_for_their_checks_leave_help_answering(bot):
    bot.slash("a-w-1 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())
    assert bot.check_worker is not None
    bot.check_worker.stop()  # from now on every Approve's re-check waits for a worker
    with ThreadPoolExecutor(20) as senders:  # impatient: all at once
        clicks = list(senders.map(lambda _: bot.approve(request.id), range(BURST)))
    assert all(delivery.status == 200 for delivery, _ in clicks)  # every click acked

    def answered(rid: str) -> list[str]:
        return bot.answers(rid)

    busy = bot.sim.wait_for(
        lambda: (
            (n := sum(any(BUSY in a for a in answered(r)) for _, r in clicks)) >= BURST - BOUND
            and n
        )
    )
    assert busy == BURST - BOUND  # the bound said, nothing queued past it
    checks = checks_queue(bot.redis)
    until(lambda: checks.count == RUNNING, 10)  # the taken clicks: each waiting for its check

    delivery, _ = bot.slash("help")

    assert delivery.status == 200 and "moves Kubernetes nodes" in ack_text(delivery)
    # ... answered while every taken click was still waiting for its re-check:
    assert checks.count == RUNNING and bot.request(request.id).state is State.PENDING
    assert sum(bool(answered(r)) for _, r in clicks) == BURST - BOUND

    bot.check_worker = CheckWorker(bot.settings)  # the checks answered: the clicks end
    until(lambda: bot.request(request.id).state is State.APPROVED, 30)
    # one click approved it (its answer: the thread's reply); every other taken click is told
    bot.sim.wait_for(lambda: sum(bool(answered(r)) for _, r in clicks) == BURST - 1, 60)
