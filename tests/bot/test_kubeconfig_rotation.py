"""The bot follows its kubeconfig files: a rotation needs no restart."""

from __future__ import annotations

from joinops.requests.lifecycle import State
from kubesim import World
from tests.bot.harness import APPROVER, until
from tests.support.clusters import add_standard_clusters


def test_the_bot_checks_on_the_rotated_kubeconfig_without_a_restart(bot, world):
    bot.slash("a-w-1 from clusterA to clusterB")
    request = bot.request_from_message(bot.wait_message())  # checked on the first servers
    with World(pod_grace_seconds=0.05, join_seconds=0.1) as rotated:
        add_standard_clusters(rotated)
        world.stop()  # the first API servers are gone
        rotated.write_kubeconfig(bot.directory / "kubeconfig")  # rewritten in place
        bot.approve(request.id)  # the approval checks the rules again, on the new servers
        bot.wait_root(request.id, lambda t: f"Approved by <@{APPROVER}>" in t)
        assert bot.request(request.id).state is State.APPROVED
        # the root may say "Approved" (the relay, on the state event) a moment before the
        # approval queues the migration
        until(lambda: bot.jobs() == [request.id], 10)
