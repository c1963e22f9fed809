"""The hosts directory as a real `joinops worker` process sees it, through a loan: a host
dropped after the worker started is lent from, its file removed makes the return's source gone
(refused, not attempted, the loan overdue), and the file back lets Return now bring the node
home. Signed Slack requests, slacksim, kubesim, real Redis; no sleeps.
"""

from __future__ import annotations

from joinops.loans.model import LoanState
from joinops.loans.store import LoanStore
from kubesim import NodeSpec
from tests.arrivals.support import arrivals_config, drop_host
from tests.bot.harness import CHANNEL, REQUESTER, BotHarness, buttons, text_of, until

HOST = "host-2"
NODE = "h2-w-1"


def _home(bot: BotHarness, request_id: str) -> list[str]:
    return bot.wait_thread(request_id, lambda rs: any(r.startswith(":house:") for r in rs), 90)


def test_a_host_file_removed_while_its_node_is_lent_makes_the_return_overdue_until_it_is_back(
    make_bot, world, tmp_path
):
    hosts = tmp_path / "hosts.d"
    world.add_cluster(
        HOST,
        version="v1.32.2",  # clusterB's: the node may go there and back
        control_plane_endpoint="h2.test:6443",
        nodes=[NodeSpec("h2-cp-1", role="control-plane"), NodeSpec(NODE)],
    )
    bot = make_bot(policy={"min_loan": "1s"}, **arrivals_config(world, tmp_path, hosts))
    bot.start_worker()
    drop_host(world, hosts, HOST)  # after the worker started: it must find the file itself

    bot.slash(f"{NODE} from {HOST} to clusterB for 1h")
    request = bot.request_from_message(bot.wait_message())
    bot.approve(request.id)
    loans = LoanStore(bot.redis)
    until(lambda: (loan := loans.get(request.id)) and loan.state is LoanState.ACTIVE, 60)
    assert world.cluster("clusterB").node(NODE) is not None

    (hosts / f"{HOST}.yaml").unlink()  # the host's file goes: its cluster is gone for everyone
    bot.click("loan_return", request.id, REQUESTER)
    replies = bot.wait_thread(request.id, lambda rs: any(":warning:" in r for r in rs), 60)
    overdue = next(r for r in replies if r.startswith(f":warning: The loan of `{NODE}` is overdue"))
    assert f"unknown cluster '{HOST}'" in overdue and "press Return now again" in overdue
    loan = loans.get(request.id)
    assert loan is not None and loan.state is LoanState.OVERDUE
    assert bot.ctx.store.get(loan.return_request) is None  # not attempted
    assert world.cluster("clusterB").node(NODE) is not None
    message = next(
        m for m in bot.sim.thread(CHANNEL, request.message_ts) if text_of(m).startswith(":warning:")
    )
    assert [a for a, _ in buttons(message)] == ["loan_return"]
    _, rid = bot.slash("loans")
    listed = bot.wait_answer(rid)
    assert f"`{request.id}` `{NODE}`: lent by {HOST} to clusterB, overdue" in listed

    drop_host(world, hosts, HOST)  # back: Return now again brings the node home
    bot.click("loan_return", request.id, REQUESTER)
    _home(bot, request.id)
    until(lambda: (found := loans.get(request.id)) and found.state is LoanState.RETURNED, 30)
    assert world.cluster(HOST).node(NODE) is not None
    assert world.cluster("clusterB").node(NODE) is None
