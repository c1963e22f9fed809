"""Checks on an Ignition config against the spec 3.4.0 rules that matter before a host boots.

Not a full implementation of Ignition's validation: the rules a generated or hand-written file
most often breaks, each reported as one line naming where it is. Sections joinops never writes
(disks, RAID, filesystems, LUKS) are only checked for shape.

- `problems(config)`: a complete config, version exactly 3.4.0.
- `fragment_problems(config)`: an extra Ignition to merge (any 3.x version up to 3.4.0).

The keys each object may hold are in ignition_schema; unit-file syntax is ignition_unit_syntax.
"""

from __future__ import annotations

import gzip
import posixpath
from typing import Any
from urllib.parse import urlsplit

from joinops.ignition import schema
from joinops.ignition.files import decode_data_url
from joinops.ignition.unit_syntax import unit_text_problems


class IgnitionInvalid(ValueError):
    """The config breaks the rules; `problems` has one line each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def validate(config: Any) -> None:
    found = problems(config)
    if found:
        raise IgnitionInvalid(found)


def problems(config: Any) -> list[str]:
    """Every rule a complete spec 3.4.0 config breaks (empty: none)."""
    return _Checker(fragment=False).run(config)


def fragment_problems(config: Any) -> list[str]:
    """Every rule an Ignition fragment to merge breaks (3.0.0 to 3.4.0 accepted)."""
    return _Checker(fragment=True).run(config)


class _Checker:
    def __init__(self, fragment: bool) -> None:
        self.fragment = fragment
        self.found: list[str] = []

    def run(self, config: Any) -> list[str]:
        if not isinstance(config, dict):
            return ["the config must be a JSON object"]
        self._keys(config, schema.TOP_KEYS, "")
        self._ignition(config.get("ignition"))
        if "storage" in config:
            self._storage(config["storage"])
        if "systemd" in config:
            self._systemd(config["systemd"])
        if "passwd" in config:
            self._passwd(config["passwd"])
        if "kernelArguments" in config:
            self._kernel_arguments(config["kernelArguments"])
        return self.found

    # --- reporting ---

    def bad(self, where: str, text: str) -> None:
        self.found.append(f"{where}: {text}" if where else text)

    def _keys(self, obj: dict[str, Any], allowed: set[str], where: str) -> None:
        for key in obj:
            if key not in allowed:
                self.bad(f"{where}.{key}" if where else key, "unknown key")

    def _object(self, value: Any, where: str) -> dict[str, Any] | None:
        if not isinstance(value, dict):
            self.bad(where, "must be an object")
            return None
        return value

    def _list(self, value: Any, where: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.bad(where, "must be a list")
            return []
        return value

    def _type(self, obj: dict[str, Any], key: str, kind: type, where: str) -> None:
        value = obj.get(key)
        if value is None:
            return
        if kind is int and isinstance(value, bool):
            self.bad(f"{where}.{key}", "must be an integer, not a boolean")
        elif not isinstance(value, kind):
            self.bad(f"{where}.{key}", f"must be {_KIND[kind]}, not {value!r}")

    # --- sections ---

    def _ignition(self, value: Any) -> None:
        section = self._object(value, "ignition") if value is not None else None
        if section is None:
            if value is None:
                self.bad("ignition.version", "is required")
            return
        self._keys(section, schema.IGNITION_KEYS, "ignition")
        version = section.get("version")
        if not isinstance(version, str) or not version:
            self.bad("ignition.version", "is required")
        elif self.fragment and version not in schema.FRAGMENT_VERSIONS:
            self.bad(
                "ignition.version",
                f"{version!r} is not a spec 3 version joinops can merge "
                f"({', '.join(schema.FRAGMENT_VERSIONS)})",
            )
        elif not self.fragment and version != schema.SPEC_VERSION:
            self.bad("ignition.version", f"must be {schema.SPEC_VERSION!r}, not {version!r}")
        config = section.get("config")
        if isinstance(config, dict):
            for i, item in enumerate(self._list(config.get("merge"), "ignition.config.merge")):
                self._resource(item, f"ignition.config.merge[{i}]", required=True)
            if config.get("replace") is not None:
                self._resource(config["replace"], "ignition.config.replace", required=False)
        elif config is not None:
            self.bad("ignition.config", "must be an object")
        timeouts = section.get("timeouts")
        if isinstance(timeouts, dict):
            for key in ("httpResponseHeaders", "httpTotal"):
                self._type(timeouts, key, int, "ignition.timeouts")
        security = section.get("security")
        if isinstance(security, dict):
            tls = security.get("tls") or {}
            cas = tls.get("certificateAuthorities") if isinstance(tls, dict) else None
            for i, item in enumerate(self._list(cas, "ignition.security.tls")):
                self._resource(item, f"ignition.security.tls.certificateAuthorities[{i}]", True)

    def _storage(self, value: Any) -> None:
        storage = self._object(value, "storage")
        if storage is None:
            return
        self._keys(storage, schema.STORAGE_KEYS, "storage")
        seen: dict[str, str] = {}
        for kind, allowed in (
            ("files", schema.FILE_KEYS),
            ("directories", schema.DIRECTORY_KEYS),
            ("links", schema.LINK_KEYS),
        ):
            for i, item in enumerate(self._list(storage.get(kind), f"storage.{kind}")):
                where = f"storage.{kind}[{i}]"
                node = self._object(item, where)
                if node is None:
                    continue
                path = self._node(node, allowed, where)
                if path is None:
                    continue
                where = f"{where} ({path})"
                if path in seen:
                    self.bad(where, f"duplicate path (also in storage.{seen[path]})")
                seen[path] = kind
                if kind == "files":
                    self._file(node, where)
                elif kind == "links" and not isinstance(node.get("target"), str):
                    self.bad(where, "a link needs a target")
                elif kind == "links":
                    self._type(node, "hard", bool, where)
                if kind != "links":
                    self._mode(node, where)
        for kind in ("disks", "filesystems", "luks", "raid"):
            for i, item in enumerate(self._list(storage.get(kind), f"storage.{kind}")):
                self._object(item, f"storage.{kind}[{i}]")

    def _node(self, node: dict[str, Any], allowed: set[str], where: str) -> str | None:
        self._keys(node, allowed, where)
        path = node.get("path")
        if not isinstance(path, str) or not path:
            self.bad(where, "path is required")
            return None
        if not path.startswith("/"):
            self.bad(f"{where} ({path})", "path must be absolute")
        elif posixpath.normpath(path) != path or path.startswith("//"):
            self.bad(f"{where} ({path})", "path must be clean (no '//', '.', '..' or trailing /)")
        self._type(node, "overwrite", bool, where)
        for owner in ("user", "group"):
            item = node.get(owner)
            if item is None:
                continue
            obj = self._object(item, f"{where}.{owner}")
            if obj is not None:
                self._keys(obj, {"id", "name"}, f"{where}.{owner}")
                self._type(obj, "id", int, f"{where}.{owner}")
                self._type(obj, "name", str, f"{where}.{owner}")
        return path

    def _mode(self, node: dict[str, Any], where: str) -> None:
        mode = node.get("mode")
        if mode is None:
            return
        if isinstance(mode, bool) or not isinstance(mode, int):
            self.bad(
                f"{where}.mode", f"must be an integer (decimal, e.g. 420 for 0644), not {mode!r}"
            )
        elif not 0 <= mode <= 0o7777:
            self.bad(f"{where}.mode", f"{mode} is not a file mode (0 to 4095, i.e. 0 to 07777)")

    def _file(self, node: dict[str, Any], where: str) -> None:
        contents = node.get("contents")
        has_source = False
        if contents is not None:
            has_source = self._resource(contents, f"{where}.contents", required=False)
        for i, item in enumerate(self._list(node.get("append"), f"{where}.append")):
            self._resource(item, f"{where}.append[{i}]", required=True)
        if node.get("overwrite") is True and not has_source:
            self.bad(where, "overwrite is true but contents.source is not set")

    def _resource(self, value: Any, where: str, required: bool) -> bool:
        """Check a resource; True when it has a source."""
        obj = self._object(value, where)
        if obj is None:
            return False
        self._keys(obj, schema.RESOURCE_KEYS, where)
        source = obj.get("source")
        compression = obj.get("compression")
        if compression not in (None, "", "gzip"):
            self.bad(f"{where}.compression", f"must be empty or 'gzip', not {compression!r}")
        verification = obj.get("verification")
        if isinstance(verification, dict):
            digest = verification.get("hash")
            if digest is not None and not (
                isinstance(digest, str) and schema.VERIFICATION_HASH.match(digest)
            ):
                self.bad(f"{where}.verification.hash", "must be sha512-<hex> or sha256-<hex>")
        if source is None:
            if required:
                self.bad(f"{where}.source", "is required")
            return False
        if not isinstance(source, str):
            self.bad(f"{where}.source", "must be a string")
            return False
        scheme = urlsplit(source).scheme
        if scheme not in schema.URL_SCHEMES:
            self.bad(
                f"{where}.source",
                f"unsupported URL scheme {scheme!r} (one of {', '.join(schema.URL_SCHEMES)})",
            )
        elif scheme == "data":
            try:
                data = decode_data_url(source)
            except ValueError as e:
                self.bad(f"{where}.source", f"invalid data URL: {e}")
                return True
            if compression == "gzip":
                try:
                    gzip.decompress(data)
                except (OSError, EOFError) as e:
                    self.bad(f"{where}.source", f"compression is gzip but the data is not ({e})")
        elif scheme in ("http", "https", "tftp", "s3", "gs") and not urlsplit(source).netloc:
            self.bad(f"{where}.source", "the URL has no host")
        return True

    def _systemd(self, value: Any) -> None:
        systemd = self._object(value, "systemd")
        if systemd is None:
            return
        self._keys(systemd, {"units"}, "systemd")
        names: set[str] = set()
        for i, item in enumerate(self._list(systemd.get("units"), "systemd.units")):
            where = f"systemd.units[{i}]"
            unit = self._object(item, where)
            if unit is None:
                continue
            self._keys(unit, schema.UNIT_KEYS, where)
            name = unit.get("name")
            if not isinstance(name, str) or not name:
                self.bad(where, "name is required")
                continue
            where = f"{where} ({name})"
            if "/" in name or not name.endswith(schema.UNIT_SUFFIXES):
                self.bad(
                    where, f"invalid unit name (a name ending in {', '.join(schema.UNIT_SUFFIXES)})"
                )
            if name in names:
                self.bad(where, "duplicate unit")
            names.add(name)
            self._type(unit, "enabled", bool, where)
            self._type(unit, "mask", bool, where)
            if unit.get("contents") is not None:
                self._unit_text(unit["contents"], f"{where}.contents")
            dropins: set[str] = set()
            for j, raw in enumerate(self._list(unit.get("dropins"), f"{where}.dropins")):
                dwhere = f"{where}.dropins[{j}]"
                dropin = self._object(raw, dwhere)
                if dropin is None:
                    continue
                self._keys(dropin, schema.DROPIN_KEYS, dwhere)
                dname = dropin.get("name")
                if not isinstance(dname, str) or not dname.endswith(".conf") or "/" in dname:
                    self.bad(dwhere, "a drop-in name ends in .conf")
                elif dname in dropins:
                    self.bad(dwhere, f"duplicate drop-in {dname}")
                else:
                    dropins.add(dname)
                if dropin.get("contents") is not None:
                    self._unit_text(dropin["contents"], f"{dwhere}.contents")

    def _unit_text(self, text: Any, where: str) -> None:
        if not isinstance(text, str):
            self.bad(where, "must be a string")
            return
        for problem in unit_text_problems(text):
            self.bad(where, problem)

    def _passwd(self, value: Any) -> None:
        passwd = self._object(value, "passwd")
        if passwd is None:
            return
        self._keys(passwd, {"users", "groups"}, "passwd")
        for kind, allowed in (("users", schema.USER_KEYS), ("groups", schema.GROUP_KEYS)):
            names: set[str] = set()
            for i, item in enumerate(self._list(passwd.get(kind), f"passwd.{kind}")):
                where = f"passwd.{kind}[{i}]"
                entry = self._object(item, where)
                if entry is None:
                    continue
                self._keys(entry, allowed, where)
                name = entry.get("name")
                if not isinstance(name, str) or not name:
                    self.bad(where, "name is required")
                    continue
                if name in names:
                    self.bad(f"{where} ({name})", "duplicate name")
                names.add(name)
                for key in ("uid", "gid"):
                    self._type(entry, key, int, where)
                for key in ("sshAuthorizedKeys", "groups"):
                    items = self._list(entry.get(key), f"{where}.{key}")
                    if any(not isinstance(k, str) for k in items):
                        self.bad(f"{where}.{key}", "must be a list of strings")

    def _kernel_arguments(self, value: Any) -> None:
        args = self._object(value, "kernelArguments")
        if args is None:
            return
        self._keys(args, {"shouldExist", "shouldNotExist"}, "kernelArguments")
        for key in ("shouldExist", "shouldNotExist"):
            items = self._list(args.get(key), f"kernelArguments.{key}")
            if any(not isinstance(k, str) for k in items):
                self.bad(f"kernelArguments.{key}", "must be a list of strings")


_KIND = {int: "an integer", bool: "true or false", str: "a string"}
