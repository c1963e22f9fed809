"""The log of the requests a cluster's API server answered, for tests to inspect and await."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class RequestRecord:
    method: str
    path: str
    query: dict[str, str]
    status: int
    bytes_out: int
    verb: str
    resource: str
    namespace: str
    name: str
    subresource: str
    seconds: float = 0.0


class RequestLog:
    def __init__(self) -> None:
        self.records: list[RequestRecord] = []
        self._logged = threading.Condition()

    def append(self, entry: RequestRecord) -> None:
        with self._logged:
            self.records.append(entry)
            self._logged.notify_all()

    def finish(self, entry: RequestRecord, bytes_out: int, seconds: float) -> None:
        """A watch is logged when it starts; when it ends, its size and duration are filled in."""
        for i in range(len(self.records) - 1, -1, -1):
            if self.records[i] is entry:
                self.records[i] = dataclasses.replace(entry, bytes_out=bytes_out, seconds=seconds)
                return

    def wait_for(
        self, predicate: Callable[[list[RequestRecord]], bool], timeout: float
    ) -> list[RequestRecord]:
        with self._logged:
            if not self._logged.wait_for(lambda: predicate(list(self.records)), timeout):
                raise TimeoutError(f"requests did not match within {timeout} s")
            return list(self.records)

    def wake(self) -> None:
        """Have `wait_for` callers look again now (a predicate that also reads a flag)."""
        with self._logged:
            self._logged.notify_all()

    def matching(self, verb: str | None, resource: str | None) -> list[RequestRecord]:
        return [
            r
            for r in list(self.records)
            if (verb is None or r.verb == verb) and (resource is None or r.resource == resource)
        ]
