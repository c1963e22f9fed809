"""The bot reads no cluster: a command's checks are jobs on the workers (`joinops.asking`), and
without a worker to make them the person is told so, and nothing is asked."""

from __future__ import annotations

from joinops.asking import CHECK_MOVE, checks_queue
from joinops.requests.lifecycle import State
from tests.bot.harness import ack_text, until
from tests.support.check_worker import CheckWorker
from tests.support.faults import HeldCall

ASK = "a-w-1 from clusterA to clusterB"
NO_WORKER = (
    "No worker answered within 1 s, so I could not check the clusters and nothing was asked. "
    "Is `joinops worker` running?"
)


def test_without_a_worker_a_join_reads_no_cluster_and_says_so(make_bot, world):
    bot = make_bot(check_worker=False, timeouts={"check": "1s"})
    for name in ("clusterA", "clusterB"):
        world.cluster(name).reset_requests()
    for text in (ASK, "a-w-1 a-w-2 to clusterB", "all from clusterA to clusterB", "clusters"):
        delivery, rid = bot.slash(text)
        # the ack is the immediate answer ("Checking…"); that no worker came is said after it,
        # through the response_url (that the ack waits for no check: the test below)
        assert delivery.status == 200 and NO_WORKER not in ack_text(delivery), text
        assert ack_text(delivery), text
        assert bot.wait_answer(rid).startswith(NO_WORKER), text
    assert world.cluster("clusterA").requests == [] and world.cluster("clusterB").requests == []
    assert bot.messages() == [] and bot.ctx.store.recent(10) == []
    assert checks_queue(bot.redis).count == 0  # withdrawn: a worker started later runs none


def test_a_join_is_checked_by_a_worker_and_posted_by_the_bot(make_bot):
    bot = make_bot(check_worker=False)  # no worker yet: the check cannot have been made
    delivery, _ = bot.slash(ASK)
    assert delivery.status == 200 and "Checking" in ack_text(delivery)  # acked all the same
    queue = checks_queue(bot.redis)
    until(lambda: queue.count == 1, 10)  # the check, waiting for a worker
    assert bot.messages() == []
    bot.check_worker = CheckWorker(bot.settings)  # stopped with the bot
    request = bot.request_from_message(bot.wait_message(timeout=30))
    assert request.state is State.PENDING and request.node == "a-w-1"
    done = [queue.fetch_job(i) for i in queue.finished_job_registry.get_job_ids()]
    assert [job.func_name for job in done if job] == [CHECK_MOVE]


def test_a_check_longer_than_a_redis_read_timeout_is_still_waited_for(bot, world):
    # redis-py ends one read after 5 s by default: the bot's wait must outlast it
    slow = HeldCall(world.cluster("clusterA"), "/api/v1/nodes/a-w-1", "GET", seconds=6.0)
    _, rid = bot.slash(ASK)
    slow.wait_answered(20)
    request = bot.request_from_message(bot.wait_message(timeout=20))
    assert request.node == "a-w-1" and bot.sim.responses(rid) == []
