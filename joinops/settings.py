"""One typed settings object: secrets from the environment, the rest from one YAML file.

Configuration flows one way: `load_settings()` is called once at start-up by the CLI, and the
resulting `Settings` is passed to everything that needs it. Nothing else reads the environment.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from joinops.errors import ConfigError

DEFAULT_SLACK_API_URL = "https://slack.com/api/"
DEFAULT_REDIS_URL = "redis://localhost:6379/0"
DEFAULT_AGENT_IMAGE = "docker.io/library/busybox:1.37"
DEFAULT_CHECK_IMAGE = "registry.k8s.io/pause:3.10"

_DURATION = re.compile(
    r"^\s*(?:(\d+)d)?\s*(?:(\d+)h)?\s*(?:(\d+)m)?\s*(?:(\d+)s)?\s*$", re.IGNORECASE
)


def parse_duration(value: Any) -> timedelta:
    """Accept `90s`, `10m`, `1h30m`, `2d`, a bare number of seconds, or a timedelta."""
    if isinstance(value, timedelta):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return timedelta(seconds=value)
    if isinstance(value, str):
        match = _DURATION.match(value)
        if match and any(match.groups()):
            days, hours, minutes, seconds = (int(g or 0) for g in match.groups())
            return timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)
    raise ValueError("expected a duration such as 90s, 10m, 1h30m or 2d")


Duration = Annotated[timedelta, BeforeValidator(parse_duration)]

AUTO: Literal["auto"] = "auto"
MaxParallel = int | Literal["auto"]


def parse_max_parallel(value: Any) -> MaxParallel:
    """`auto` (joinops/parallelism.py chooses) or a whole number from 1 to 64."""
    if isinstance(value, str) and value.strip().lower() == AUTO:
        return AUTO
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 64:
        return value
    raise ValueError(f"expected `auto` or a whole number from 1 to 64, got {value!r}")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ClusterConfig(_Strict):
    """How to reach one managed cluster."""

    kubeconfig: Path | None = None  # None: the active kubeconfig (KUBECONFIG or ~/.kube/config)
    context: str | None = None  # None: the kubeconfig's current context
    # After a node joins this cluster, a short-lived pod on it must run with an address from
    # its pod CIDR. Turn off for a target without a pod network yet.
    pod_check: bool = True


class Timeouts(_Strict):
    """Every bound joinops waits under. Units: durations (`30s`, `10m`, `1h`)."""

    approval: Duration = timedelta(minutes=30)  # a pending request expires after this
    drain: Duration = timedelta(minutes=10)  # the whole drain, evictions and terminations
    join: Duration = timedelta(minutes=15)  # from node agent start to Ready in the target
    # a pod joinops runs on the node (probes, the node agent) must be Running within this;
    # otherwise it is deleted and the move rolled back: nothing was done to the host
    agent_start: Duration = timedelta(minutes=5)
    probe: Duration = timedelta(minutes=5)  # a started probe's checks (image pulls included)
    pod_check: Duration = timedelta(minutes=3)  # the moved node's first pod in the target
    upload_certs: Duration = timedelta(minutes=5)  # the control-plane certificate upload pod
    api: Duration = timedelta(seconds=15)  # one Kubernetes API call (connect + read)
    # the longest wait an API server's Retry-After (a 429, a 5xx) gets; a longer one is capped
    retry_after_cap: Duration = timedelta(seconds=60)
    lock: Duration = timedelta(seconds=60)  # a dead worker's locks are free again after this
    # A waiting step (drain, join) watches this long at a time; when other jobs are queued it
    # then gives its worker up and is checked again this much later (RQ's scheduler).
    recheck: Duration = timedelta(seconds=1)
    # the bot's wait for a worker to make a command's cluster checks (joinops.asking)
    check: Duration = timedelta(seconds=60)


class AgentConfig(_Strict):
    """The node agent pod joinops runs on a node to re-join it."""

    namespace: str = "joinops-system"
    image: str = DEFAULT_AGENT_IMAGE
    # The pod check's image (a moved node must run a pod): the pause image every node already
    # holds for its pod sandboxes, so nothing is pulled. Your mirror's in an air-gapped cluster.
    check_image: str = DEFAULT_CHECK_IMAGE
    host_profile: Literal["kubeadm", "ock"] = "kubeadm"
    # carry the node's own labels and taints (not the cluster-owned ones: *.kubernetes.io,
    # *.k8s.io, joinops.io) into the target: taints at registration, labels at the clean-up
    keep_labels_and_taints: bool = False
    # a join into the target that fails after the reset brings the node back into its source
    # (workers/agent_return.py; README, "How a migration runs", step 7). false: such a join
    # fails saying where the node is, as before returns existed
    return_to_source: bool = True


class Policy(_Strict):
    allow_self_approval: bool = False  # may a requester approve their own request?
    min_loan: Duration = timedelta(minutes=10)  # the shortest `for DURATION` a loan may ask
    max_loan: Duration = timedelta(days=30)  # the longest, extensions included
    loan_returns_need_approval: bool = False  # a loan's return waits for an approver's click
    # requests one person may have open (waiting, approved or running) at once; a batch is one
    max_open_requests_per_user: int = Field(default=20, ge=1, le=10_000)

    @model_validator(mode="after")
    def _loan_range(self) -> Policy:
        if self.min_loan <= timedelta(0):
            raise ValueError("min_loan must be longer than 0 s")
        if self.max_loan < self.min_loan:
            raise ValueError("max_loan must not be shorter than min_loan")
        return self


class SlackConfig(_Strict):
    """How the bot talks to Slack's Web API."""

    # Slack's documented rate limits (docs/slack.md#rate-limits) times this: below 1 leaves a
    # margin for other apps on the same token; above 1 only against a sped-up slacksim.
    rate_scale: float = Field(default=1.0, gt=0, le=1000)


SLACK_USER_ID = r"[UW][A-Z0-9]{2,}"
SLACK_GROUP_ID = r"S[A-Z0-9]{2,}"
SLACK_CHANNEL_ID = r"[CGD][A-Z0-9]{2,}"


def _slack_id_list(value: list[str], pattern: str, what: str) -> list[str]:
    for item in value:
        if not re.fullmatch(pattern, item):
            raise ValueError(f"{item!r} is not a Slack {what}")
    return value


class Requesters(_Strict):
    """Who may use `/join` (beyond `help`), and where. Each empty list means "no limit"; the
    configured approvers always may. Slack IDs, not names: names change, IDs do not."""

    users: list[str] = Field(default_factory=list)  # user IDs (U…/W…)
    groups: list[str] = Field(default_factory=list)  # user-group IDs (S…): their members
    channels: list[str] = Field(default_factory=list)  # channel IDs (C…/G…/D…) it works in

    @field_validator("users")
    @classmethod
    def _users(cls, value: list[str]) -> list[str]:
        return _slack_id_list(value, SLACK_USER_ID, "user ID (U…/W…)")

    @field_validator("groups")
    @classmethod
    def _groups(cls, value: list[str]) -> list[str]:
        return _slack_id_list(value, SLACK_GROUP_ID, "user-group ID (S…)")

    @field_validator("channels")
    @classmethod
    def _channels(cls, value: list[str]) -> list[str]:
        return _slack_id_list(value, SLACK_CHANNEL_ID, "channel ID (C…/G…/D…)")

    @property
    def anyone(self) -> bool:
        """No user or group list: every user may ask (the channel list may still apply)."""
        return not self.users and not self.groups


CLUSTER_NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}"


class AccessConfig(_Strict):
    """Who beyond the workspace's full members may use joinops (commands and buttons)."""

    allow_guests: bool = False  # single- and multi-channel guests
    allow_external: bool = False  # members of other organisations (Slack Connect)


class Proposal(_Strict):
    """Where an arriving host is proposed to go (the announcement's button)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    to: str  # a cluster under `clusters:`
    as_: Literal["worker", "control-plane"] = Field(default="worker", alias="as")


class Arrivals(_Strict):
    """`arrivals:` a directory of kubeconfig files, one cluster each (joinops/clusters/hostsdir.py),
    and where their first answer is announced."""

    directory: Path
    channel: str | None = None  # Slack channel ID (C…/G…); None: nothing is announced
    propose: Proposal | None = None
    poll: Duration = timedelta(seconds=5)  # how often the bot looks at the directory

    @field_validator("channel")
    @classmethod
    def _channel(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[CG][A-Z0-9]{2,}", value):
            raise ValueError(f"{value!r} is not a Slack channel ID (C…/G…)")
        return value


class FileConfig(_Strict):
    """The YAML file named by JOINOPS_CONFIG."""

    clusters: dict[str, ClusterConfig] = Field(default_factory=dict)
    arrivals: Arrivals | None = None
    approvers: list[str] = Field(default_factory=list)
    requesters: Requesters = Requesters()
    access: AccessConfig = AccessConfig()
    timeouts: Timeouts = Timeouts()
    agent: AgentConfig = AgentConfig()
    policy: Policy = Policy()
    slack: SlackConfig = SlackConfig()
    # Worker joins at once in one batch: `auto` (the smaller of the two below) or 1 to 64.
    max_parallel: Annotated[MaxParallel, BeforeValidator(parse_max_parallel)] = AUTO
    # auto: at most this many nodes joining one target at once (joinops/parallelism.py: why 64)
    join_admission: int = Field(default=64, ge=1, le=1000)
    # auto: this many joins at once for each live `joinops worker`
    joins_per_worker: int = Field(default=16, ge=1, le=1000)
    max_batch_nodes: int = Field(default=200, ge=1, le=1000)  # nodes in one batch request

    @field_validator("approvers")
    @classmethod
    def _slack_ids(cls, value: list[str]) -> list[str]:
        for approver in value:
            if not re.fullmatch(r"[USW][A-Z0-9]{2,}", approver):
                raise ValueError(
                    f"{approver!r} is not a Slack user ID (U…/W…) or user-group ID (S…)"
                )
        return value

    @field_validator("clusters")
    @classmethod
    def _cluster_names(cls, value: dict[str, ClusterConfig]) -> dict[str, ClusterConfig]:
        for name in value:
            if not re.fullmatch(CLUSTER_NAME, name):
                raise ValueError(
                    f"cluster name {name!r} must be 1-63 letters, digits, '.', '_' or '-'"
                )
        return value


class Secrets(BaseSettings):
    """Secrets and endpoints, from the environment only."""

    model_config = SettingsConfigDict(env_prefix="", case_sensitive=False, extra="ignore")

    slack_bot_token: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None
    slack_app_token: SecretStr | None = None
    slack_api_url: str = DEFAULT_SLACK_API_URL
    redis_url: str = DEFAULT_REDIS_URL
    joinops_config: Path | None = None
    kubeconfig: str | None = None  # KUBECONFIG, used only when JOINOPS_CONFIG is not set


@dataclass(frozen=True)
class Settings:
    """Everything joinops is configured with, validated once."""

    secrets: Secrets
    clusters: dict[str, ClusterConfig]
    approvers: list[str]
    timeouts: Timeouts
    agent: AgentConfig
    policy: Policy
    max_parallel: MaxParallel  # `auto`: joinops/parallelism.py chooses when a batch is planned
    requesters: Requesters = field(default_factory=Requesters)
    access: AccessConfig = field(default_factory=AccessConfig)
    arrivals: Arrivals | None = None
    slack: SlackConfig = field(default_factory=SlackConfig)
    max_batch_nodes: int = 200  # a batch naming or resolving to more is refused as a whole
    join_admission: int = 64  # max_parallel auto: nodes joining one target at once, at most
    joins_per_worker: int = 16  # max_parallel auto: joins at once per live worker

    @property
    def cluster_names(self) -> list[str]:
        return sorted(self.clusters)


def load_settings() -> Settings:
    """Build the settings from the environment and JOINOPS_CONFIG; raise ConfigError."""
    try:
        secrets = Secrets()
    except ValidationError as e:
        raise ConfigError(_describe(e, "environment")) from None
    if secrets.joinops_config is None:
        file_config = FileConfig(clusters=_clusters_from_kubeconfig(secrets.kubeconfig))
    else:
        file_config = _read_file_config(secrets.joinops_config)
    return build_settings(file_config, secrets)


def build_settings(file_config: FileConfig, secrets: Secrets) -> Settings:
    arrivals = file_config.arrivals
    if not file_config.clusters and arrivals is None:
        raise ConfigError(["clusters: no clusters are configured (add them under `clusters:`)"])
    if arrivals and arrivals.propose and arrivals.propose.to not in file_config.clusters:
        raise ConfigError(
            [
                f"arrivals.propose.to: {arrivals.propose.to!r} is not a cluster under "
                f"`clusters:` ({', '.join(sorted(file_config.clusters)) or 'none'})"
            ]
        )
    return Settings(
        secrets=secrets,
        clusters=file_config.clusters,
        approvers=file_config.approvers,
        timeouts=file_config.timeouts,
        agent=file_config.agent,
        policy=file_config.policy,
        max_parallel=file_config.max_parallel,
        requesters=file_config.requesters,
        access=file_config.access,
        arrivals=arrivals,
        slack=file_config.slack,
        max_batch_nodes=file_config.max_batch_nodes,
        join_admission=file_config.join_admission,
        joins_per_worker=file_config.joins_per_worker,
    )


def _read_file_config(path: Path) -> FileConfig:
    try:
        raw = yaml.safe_load(path.read_text())
    except OSError as e:
        raise ConfigError([f"JOINOPS_CONFIG: cannot read {path}: {e.strerror}"]) from None
    except yaml.YAMLError as e:
        raise ConfigError([f"JOINOPS_CONFIG: {path} is not valid YAML: {e}"]) from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError([f"JOINOPS_CONFIG: {path} must hold a mapping at the top level"])
    try:
        return FileConfig.model_validate(raw)
    except ValidationError as e:
        raise ConfigError(_describe(e, str(path))) from None


def _clusters_from_kubeconfig(kubeconfig: str | None) -> dict[str, ClusterConfig]:
    """Without JOINOPS_CONFIG every context of the active kubeconfig is a cluster."""
    first = (kubeconfig or "").split(os.pathsep)[0]
    path = Path(first) if first else Path.home() / ".kube/config"
    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError) as e:
        raise ConfigError(
            [f"no JOINOPS_CONFIG, and the active kubeconfig {path} cannot be read: {e}"]
        ) from None
    contexts = [c.get("name") for c in raw.get("contexts") or [] if isinstance(c, dict)]
    return {name: ClusterConfig(kubeconfig=path, context=name) for name in contexts if name}


def _describe(error: ValidationError, where: str) -> list[str]:
    """One line per problem: which key, what was wrong."""
    problems = []
    for item in error.errors():
        key = ".".join(str(part) for part in item["loc"]) or "(top level)"
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            message = "unknown key (check the spelling; see README, Configuration)"
        elif item["type"] == "literal_error":
            message = f"got {item['input']!r}; {message}"
        problems.append(f"{where}: {key}: {message}")
    return problems
