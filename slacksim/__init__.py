"""slacksim: a fake Slack Web API over real HTTP, for tests and benchmarks.

`SlackSim` serves the Web API methods joinops uses, records every call and keeps the resulting
workspace state; `slacksim.signing` builds and signs requests *into* a Bolt app as Slack does.
"""

from slacksim.faults import Fault, Faults
from slacksim.server import Call, SlackSim
from slacksim.workspace import Upload

__all__ = ["Call", "Fault", "Faults", "SlackSim", "Upload"]
