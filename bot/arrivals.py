"""The arrivals watcher: a thread of the bot that looks at the hosts directory every
`arrivals.poll` and announces each host once, when its cluster first answers.

Each round: every usable file's host is recorded (waiting); a waiting host whose next probe is
due is read (`joinops.arrivals.host.probe`) — one that does not answer is tried again later,
twice as late each time up to `MAX_BACKOFF`, the count kept in Redis so a restart does not reset
it — and once it answers, the proposed move is checked and the announcement posted, after a
compare-and-set claimed it (several bots on one directory announce a host once). A file that is
not a usable kubeconfig is reported once (to the channel and the log, naming the file) when it is
found so on two rounds in a row with the same content: a file still being written is not
reported. Hosts whose Move opened a request follow that request: moved when it succeeds, open
again when it was rejected, expired or cancelled.

Without a bot nothing announces (announcing is Slack's business); the clusters of the directory
are still usable by every process, and `joinops arrivals` lists the directory as it is.
"""

from __future__ import annotations

import logging
import threading

from bot.arrival_message import ArrivalMessages
from bot.context import BotContext
from bot.message import SLACK_ERRORS, slack_error
from bot.texts import arrivals as texts
from joinops.arrivals import host as hosts
from joinops.arrivals.store import Arrival, ArrivalStore, State
from joinops.clusters.hostsdir import HostsView
from joinops.clusters.kube import KubeCluster
from joinops.errors import ClusterError, ConfigError, UsageError
from joinops.requests.lifecycle import State as RequestState

log = logging.getLogger(__name__)

MAX_BACKOFF = 300.0  # seconds between two probes of a host that does not answer, at most
GIVEN_UP = (RequestState.REJECTED, RequestState.EXPIRED, RequestState.CANCELLED)


def backoff(poll: float, attempts: int) -> float:
    """Seconds to the next probe after `attempts` unanswered ones: poll, doubling, capped."""
    return float(min(MAX_BACKOFF, poll * 2 ** max(0, attempts - 1)))


class ArrivalWatcher:
    def __init__(self, ctx: BotContext, store: ArrivalStore | None = None) -> None:
        assert ctx.settings.arrivals is not None and ctx.clusters.hosts is not None
        self.ctx = ctx
        self.config = ctx.settings.arrivals
        self.directory = ctx.clusters.hosts
        self.store = store or ArrivalStore(ctx.redis, ctx.clock)
        self.messages = ArrivalMessages(ctx, self.store)
        self._suspect: set[str] = set()  # problems seen last round, reported if seen again
        self.rounds = 0  # rounds completed (a test awaits the next one instead of sleeping)
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    # ---- the thread ------------------------------------------------------------------------

    def start(self) -> ArrivalWatcher:
        self._thread = threading.Thread(target=self._run, name="joinops-arrivals", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(10)

    def _run(self) -> None:
        poll = self.config.poll.total_seconds()
        log.info("arrivals: watching %s every %.1f s", self.directory.directory, poll)
        while not self._stopping.is_set():
            try:
                self.round()
            except Exception:  # the watcher lives on; the next round tries again
                log.exception("arrivals: a round failed")
            self._stopping.wait(poll)

    # ---- one round -------------------------------------------------------------------------

    def round(self) -> None:
        view = self.directory.scan()
        for cluster, found in view.clusters.items():
            arrival = self.store.seen(cluster, found.file)
            due = arrival.state is State.WAITING and self.ctx.clock() >= arrival.next_probe_at
            if due:
                self._probe(arrival, found.digest)
        self._report_problems(view)
        self._follow_requests()
        self.rounds += 1

    def _probe(self, arrival: Arrival, digest: str) -> None:
        try:
            cluster = self.ctx.clusters.get(arrival.cluster)
            facts = hosts.probe(cluster)
        except ConfigError as e:  # the file parses but the client cannot use it
            self._report_once(f"unusable:{arrival.file}:{digest}", arrival.file, str(e))
            self._later(arrival, str(e))
            return
        except ClusterError as e:
            self._later(arrival, e.detail)
            return
        except UsageError:  # its file went since the scan: the next round finds it removed
            log.info("arrivals: %s went while it was being probed", arrival.file)
            return
        proposal = self._proposal(facts, cluster)
        self.store.update(
            arrival.cluster,
            facts=facts.to_json(),
            proposal=proposal.to_json() if proposal else "",
            attempts=0,
            next_probe_at=0,
            last_error="",
        )
        self._announce(arrival.cluster)

    def _proposal(self, facts: hosts.HostFacts, cluster: KubeCluster) -> hosts.Proposal | None:
        propose = self.config.propose
        if propose is None or facts.node is None:
            return None
        try:
            target = self.ctx.clusters.get(propose.to)
        except ConfigError as e:
            node = facts.node.name
            return hosts.Proposal(node, propose.to, propose.as_, False, (str(e),))
        return hosts.proposal(facts, cluster, target, propose.as_)

    def _later(self, arrival: Arrival, error: str) -> None:
        attempts = arrival.attempts + 1
        wait = backoff(self.config.poll.total_seconds(), attempts)
        log.info(
            "arrivals: %s does not answer yet (%s); next try in %.0f s",
            arrival.cluster,
            error,
            wait,
        )
        self.store.update(
            arrival.cluster,
            attempts=attempts,
            next_probe_at=self.ctx.clock() + wait,
            last_error=error,
        )

    def _announce(self, cluster: str) -> None:
        channel = self.config.channel
        if channel is None:
            return  # answering, recorded; nowhere to announce it
        if not self.store.transition(
            cluster,
            State.ANNOUNCED,
            (State.WAITING,),
            announced_at=self.ctx.clock(),
            channel=channel,
        ):
            return  # another bot announced it
        arrival = self.store.get(cluster)
        assert arrival is not None
        try:
            ts = self.messages.post(channel, arrival)
        except SLACK_ERRORS as e:
            log.warning("arrivals: could not announce %s: %s", cluster, slack_error(e))
            self.store.transition(cluster, State.WAITING, (State.ANNOUNCED,))
            self._later(arrival, f"Slack: {slack_error(e)}")
            return
        self.store.update(cluster, message_ts=ts)
        log.info("arrivals: announced %s in %s", cluster, channel)
        now = self.store.get(cluster)
        if now is not None and now.state is not State.ANNOUNCED:
            # clicked between the post and its ts being recorded: that click's refresh found no
            # message to update, so the announcement shows the click now
            self.messages.refresh(cluster)

    # ---- files that cannot be used ---------------------------------------------------------

    def _report_problems(self, view: HostsView) -> None:
        now: dict[str, tuple[str, str]] = {}
        for bad in view.invalid:
            now[f"invalid:{bad.file}:{bad.digest}"] = (
                bad.file,
                texts.invalid_file(bad.file, bad.problem),
            )
        for cluster, names in view.duplicates.items():
            problem = view.refusal(cluster) or cluster
            now[f"duplicate:{cluster}:{','.join(names)}"] = (
                ",".join(names),
                texts.duplicate(problem),
            )
        for key, (file, text) in now.items():
            if key in self._suspect:
                self._report_text_once(key, file, text)
        self._suspect = set(now)

    def _report_once(self, key: str, file: str, problem: str) -> None:
        self._report_text_once(key, file, texts.invalid_file(file, problem))

    def _report_text_once(self, key: str, file: str, text: str) -> None:
        if not self.store.report_once(key):
            return
        log.warning("arrivals: %s: %s", file, text)
        if self.config.channel is not None:
            self.messages.report(self.config.channel, text)

    # ---- hosts whose move was requested ----------------------------------------------------

    def _follow_requests(self) -> None:
        for arrival in self.store.all():
            if arrival.state is not State.REQUESTED or not arrival.request_id:
                continue
            request = self.ctx.store.get(arrival.request_id)
            if request is None:
                continue
            if request.state is RequestState.SUCCEEDED:
                moved = self.store.transition(arrival.cluster, State.MOVED, (State.REQUESTED,))
            elif request.state in GIVEN_UP:
                moved = self.store.transition(
                    arrival.cluster, State.ANNOUNCED, (State.REQUESTED,), by="", request_id=""
                )
            else:
                continue
            if moved:
                self.messages.refresh(arrival.cluster)
