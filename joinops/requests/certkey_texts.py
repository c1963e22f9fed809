"""What joinops says about the target's uploaded control-plane certificates (one key per target
at a time, workers.certkeys)."""

from __future__ import annotations

from datetime import UTC, datetime


def _when(moment: float) -> str:
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%d %H:%M UTC")


def relied_on(target: str, holder: str, ignition: bool, until: float) -> str:
    """A second upload into `target` would break the join that relies on the first."""
    what = (
        f"the control-plane Ignition file of {holder}"
        if ignition
        else f"the control-plane join of {holder}"
    )
    return (
        f"{target}'s control-plane certificates (kube-system/kubeadm-certs) were uploaded for "
        f"{what}, under a key only that join holds, and are relied on until {_when(until)}. "
        f"Another upload would encrypt them under a new key and that join could no longer "
        f"decrypt them. Ask again after {_when(until)}, or join this host as a worker."
    )
