"""Detached JWS (RFC 7515 appendix F) with HS256, as the bootstrap signer makes them."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def detached_signature(content: str, token_id: str, token_secret: str) -> str:
    """``header..signature``: a compact JWS over ``content`` with the payload elided."""
    header = _b64url(json.dumps({"alg": "HS256", "kid": token_id}, separators=(",", ":")).encode())
    payload = _b64url(content.encode())
    mac = hmac.new(token_secret.encode(), f"{header}.{payload}".encode(), hashlib.sha256)
    return f"{header}..{_b64url(mac.digest())}"


def verify_detached(content: str, signature: str, token_id: str, token_secret: str) -> bool:
    """What a joining node checks against ``jws-kubeconfig-<id>`` in cluster-info."""
    expected = detached_signature(content, token_id, token_secret)
    return hmac.compare_digest(expected, signature)
