"""`/join arrivals`, through signed slash commands: what a user reads about the hosts seen."""

from __future__ import annotations

from joinops.arrivals.store import ArrivalStore, State
from kubesim import NodeSpec
from slacksim.signing import CHANNEL_ID
from tests.arrivals.support import arrivals_config, drop_host
from tests.bot.harness import REQUESTER, BotHarness, ack_text, until
from tests.bot.test_arrivals import PROPOSE, announced, click


def ask(bot: BotHarness) -> str:
    delivery, rid = bot.slash("arrivals")
    assert delivery.status == 200 and not ack_text(delivery)  # answered after the ack
    body = bot.sim.wait_for(lambda: bot.sim.responses(rid), 10)[-1]
    assert body.get("response_type") == "ephemeral"
    return bot.wait_answer(rid)


def test_without_arrivals_configured_the_answer_says_how_to_configure_them(bot):
    answer = ask(bot)
    assert "Arrivals are not configured: set `arrivals.directory`" in answer


def test_the_list_shows_each_host_its_file_since_when_its_state_and_its_request(
    make_bot, world, tmp_path
):
    hosts = tmp_path / "hosts.d"
    bot = make_bot(**arrivals_config(world, tmp_path, hosts, channel=CHANNEL_ID, propose=PROPOSE))
    empty = ask(bot)
    assert f"No host has been seen in `{hosts}` yet" in empty
    assert f"announced in <#{CHANNEL_ID}> when it first answers" in empty

    world.add_cluster("host-2", version="v1.32.0", nodes=[NodeSpec("node-2", role="control-plane")])
    world.cluster("host-2").set_reachable(False)
    drop_host(world, hosts, "host-1")
    message = announced(bot)
    drop_host(world, hosts, "host-2", file="host-2.conf")
    store = ArrivalStore(bot.redis)
    until(lambda: (a := store.get("host-2")) and a.attempts >= 1, 20)
    click(bot, "arrival_move", "host-1", message["ts"], REQUESTER)
    arrival = until(lambda: (a := store.get("host-1")) and a.request_id and a, 20)
    assert arrival.state is State.REQUESTED

    listed = ask(bot)
    assert f"*Hosts seen in `{hosts}` (2)*" in listed
    first, second = [line for line in listed.splitlines() if line.startswith("• ")]
    assert first.startswith("• *host-1* (`host-1.yaml`) since <!date^")
    assert f": requested · `{arrival.request_id}`" in first
    assert second.startswith("• *host-2* (`host-2.conf`) since <!date^")
    assert ": waiting · " in second and "did not answer" in second

    (hosts / "host-2.conf").unlink()
    gone = ask(bot)
    assert "its file host-2.conf is no longer in the directory" in gone


def test_arrivals_takes_nothing_after_it(bot):
    delivery, _ = bot.slash("arrivals host-1")
    answer = ack_text(delivery)
    assert "`arrivals` takes nothing after it" in answer and "Usage: `/join arrivals`" in answer


def test_help_lists_arrivals(bot):
    delivery, _ = bot.slash("help")
    assert "`/join arrivals`: list the hosts seen in the hosts directory" in ack_text(delivery)
