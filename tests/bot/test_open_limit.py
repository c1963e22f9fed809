"""`policy.max_open_requests_per_user`: a burst of commands from one person is acked in full,
and exactly those beyond the limit of open requests are refused, saying why and what to do."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from tests.bot.harness import APPROVER, REQUESTER, ack_text, until

LIMIT = 3
BURST = 500
ASK = "a-w-1 from clusterA to clusterB"


def test_a_burst_is_acked_in_full_and_only_the_requests_past_the_limit_are_refused(make_bot):
    bot = make_bot(policy={"max_open_requests_per_user": LIMIT})
    with ThreadPoolExecutor(25) as senders:
        sent = list(senders.map(lambda _: bot.slash(ASK), range(BURST)))
    assert all(d.status == 200 and "Checking" in ack_text(d) for d, _ in sent)  # none dropped

    refusal = (
        f"You have {LIMIT} requests open, the most one person may have at once "
        f"(`policy.max_open_requests_per_user`: {LIMIT}), so nothing was asked."
    )

    def refused() -> list[str]:
        """The commands answered with the refusal (read under the sim's lock, without copies:
        it is asked again after every call the sim handles)."""
        answered = bot.sim.workspace.responses
        return [
            rid
            for _, rid in sent
            if any(refusal in str(body.get("text", "")) for body in answered.get(rid, ()))
        ]

    bot.sim.wait_for(lambda: len(refused()) == BURST - LIMIT, 60)
    until(lambda: len(bot.ctx.store.active()) == LIMIT, 30)
    assert "`/join list` shows them" in bot.answers(refused()[0])[-1]
    assert {r.requester for r in bot.ctx.store.active()} == {REQUESTER}
    assert len(bot.messages()) == LIMIT  # one request message each, nothing else posted

    # the limit is per person, and a slot is free again once a request ends
    bot.slash(ASK, user=APPROVER)
    bot.sim.wait_for(lambda: len(bot.messages()) == LIMIT + 1)
    first = next(r for r in bot.ctx.store.active() if r.requester == REQUESTER)
    bot.slash(f"cancel {first.id}")
    until(lambda: first.id not in {r.id for r in bot.ctx.store.active()}, 10)
    bot.slash(ASK)
    bot.sim.wait_for(lambda: len(bot.messages()) == LIMIT + 2)
