"""Text from outside the bot is shown, never interpreted: a host that reports `<!channel>` as
its architecture is shown as such in the request message, and nobody is pinged."""

from __future__ import annotations

import json

from kubesim import NodeSpec
from tests.bot.harness import text_of

ODD = "<!channel> & co"


def test_a_node_reporting_channel_as_its_architecture_pings_nobody(bot, world):
    world.cluster("clusterA").add_node(NodeSpec("odd-arch", architecture=ODD))
    bot.slash("odd-arch from clusterA to clusterB")
    message = bot.sim.wait_for(
        lambda: next((m for m in bot.messages() if "odd-arch" in text_of(m)), None)
    )
    shown = text_of(message)
    assert "&lt;!channel&gt; &amp; co" in shown, shown  # the finding says what the node said
    posted = json.dumps(message)
    assert "<!channel>" not in posted  # in no block and not in the notification text
    assert "<@" in shown  # the bot's own markup (the requester's mention) is left as it is
