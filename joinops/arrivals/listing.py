"""`joinops arrivals` and `/join arrivals`: every host seen, from the store and the directory.

A host the bot recorded is listed with its state, when it was first seen and the request its
Move opened. A usable file of the directory no bot has recorded yet (no bot running, or the next
round has not come) is listed too, as waiting. A recorded host whose file is no longer in the
directory keeps its line, noted as gone.
"""

from __future__ import annotations

from dataclasses import dataclass

from joinops.arrivals import texts
from joinops.arrivals.store import ArrivalStore, State
from joinops.clusters.hostsdir import HostsView


@dataclass(frozen=True)
class Row:
    cluster: str
    file: str
    first_seen: float  # when a bot first saw it; the file's time when none has yet
    state: str
    request_id: str  # the request its Move opened (requested, moved); "" when none
    note: str = ""  # why it waits, or that its file is gone


def rows(store: ArrivalStore, view: HostsView) -> list[Row]:
    """Every host seen, the first seen first."""
    listed: list[Row] = []
    recorded = set()
    for arrival in store.all():
        recorded.add(arrival.cluster)
        present = arrival.cluster in view.clusters
        note = arrival.last_error if arrival.state is State.WAITING else ""
        if not present:
            note = texts.file_gone(arrival.file)
        listed.append(
            Row(
                arrival.cluster,
                arrival.file,
                arrival.first_seen,
                str(arrival.state),
                arrival.request_id,
                note,
            )
        )
    for cluster, found in sorted(view.clusters.items(), key=lambda item: item[1].modified):
        if cluster not in recorded:
            listed.append(
                Row(cluster, found.file, found.modified, str(State.WAITING), "", texts.unseen())
            )
    return sorted(listed, key=lambda row: row.first_seen)
