"""The shape of an Ignition spec 3.4.0 config: versions, the keys each object may hold, the
names and URL schemes it accepts. Data only; ignition_validate checks a config against it."""

from __future__ import annotations

import re

SPEC_VERSION = "3.4.0"
FRAGMENT_VERSIONS = ("3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.4.0")
UNIT_SUFFIXES = (
    ".service",
    ".socket",
    ".device",
    ".mount",
    ".automount",
    ".swap",
    ".target",
    ".path",
    ".timer",
    ".snapshot",
    ".slice",
    ".scope",
)
URL_SCHEMES = ("data", "http", "https", "tftp", "s3", "gs", "arn")
TOP_KEYS = {"ignition", "kernelArguments", "passwd", "storage", "systemd"}
IGNITION_KEYS = {"version", "config", "proxy", "security", "timeouts"}
STORAGE_KEYS = {"directories", "disks", "files", "filesystems", "links", "luks", "raid"}
NODE_KEYS = {"path", "overwrite", "user", "group"}
FILE_KEYS = NODE_KEYS | {"contents", "append", "mode"}
DIRECTORY_KEYS = NODE_KEYS | {"mode"}
LINK_KEYS = NODE_KEYS | {"target", "hard"}
RESOURCE_KEYS = {"source", "compression", "httpHeaders", "verification"}
UNIT_KEYS = {"name", "enabled", "mask", "contents", "dropins"}
DROPIN_KEYS = {"name", "contents"}
USER_KEYS = {
    "name",
    "passwordHash",
    "sshAuthorizedKeys",
    "uid",
    "gecos",
    "homeDir",
    "noCreateHome",
    "primaryGroup",
    "groups",
    "noUserGroup",
    "noLogInit",
    "shell",
    "system",
    "shouldExist",
}
GROUP_KEYS = {"name", "gid", "passwordHash", "system", "shouldExist"}
VERIFICATION_HASH = re.compile(r"^(sha512-[0-9a-f]{128}|sha256-[0-9a-f]{64})$")
