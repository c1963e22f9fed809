"""Secrets kept out of what is shown: the password a URL may carry (a Redis URL does:
`redis://:s3cret@host:6379/0`, or `?password=s3cret`)."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit

HIDDEN = "***"


def redacted_url(url: str) -> str:
    """`url` with its password shown as ***; everything else as it was written."""
    parts = urlsplit(url)
    if parts.password is not None:
        user_info, _, host = parts.netloc.rpartition("@")
        url = url.replace(parts.netloc, f"{user_info.split(':', 1)[0]}:{HIDDEN}@{host}", 1)
    if "password" in parts.query:
        pairs = [(k, HIDDEN if k == "password" else v) for k, v in parse_qsl(parts.query)]
        url = url.replace("?" + parts.query, "?" + urlencode(pairs, safe="*"), 1)
    return url
