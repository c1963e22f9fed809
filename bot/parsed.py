"""What a `/join` command says once parsed (`bot.grammar.parse`): one frozen dataclass per form."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from joinops.requests.model import Role


@dataclass(frozen=True, slots=True)
class Migrate:
    nodes: tuple[str, ...]
    source: str | None  # None: each node's current cluster is looked up later
    target: str
    role: Role = Role.WORKER
    force: bool = False  # delete pods no controller recreates
    loan: str = ""  # `for DURATION` as typed: a loan, moved back then (bot.loans checks it)


@dataclass(frozen=True, slots=True)
class MigrateAll:
    source: str
    target: str
    force: bool = False
    loan: str = ""


@dataclass(frozen=True, slots=True)
class Ignition:
    cluster: str
    role: Role = Role.WORKER


@dataclass(frozen=True, slots=True)
class Help:
    pass


@dataclass(frozen=True, slots=True)
class Clusters:
    pass


@dataclass(frozen=True, slots=True)
class List:
    pass


@dataclass(frozen=True, slots=True)
class Loans:
    pass


@dataclass(frozen=True, slots=True)
class Arrivals:
    pass


@dataclass(frozen=True, slots=True)
class Status:
    request_id: str | None = None


@dataclass(frozen=True, slots=True)
class Cancel:
    request_id: str


@dataclass(frozen=True, slots=True)
class Retry:
    request_id: str


Command: TypeAlias = (
    Migrate
    | MigrateAll
    | Ignition
    | Help
    | Clusters
    | List
    | Loans
    | Arrivals
    | Status
    | Cancel
    | Retry
)
