"""A web page that stands in for a Slack channel, over SlackSim (see `ChannelPage`).

The page types slash commands and clicks buttons as people of the workspace; `Gateway` turns
them into requests signed and delivered to the app exactly as Slack would send them, and the
page draws what the app posted from SlackSim's state (`snapshot`).
"""

from slacksim.signing import CHANNEL_ID
from slacksim.web.gateway import Gateway, Person
from slacksim.web.page import ChannelPage

__all__ = ["CHANNEL_ID", "ChannelPage", "Gateway", "Person"]
