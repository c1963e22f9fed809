"""API errors rendered as the real server's ``Status`` bodies."""

from __future__ import annotations

from typing import Any

REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


class ApiError(Exception):
    """An error answer: HTTP code plus a metav1.Status body."""

    def __init__(
        self,
        code: int,
        message: str,
        reason: str | None = None,
        details: dict[str, Any] | None = None,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = REASONS.get(code, "") if reason is None else reason
        self.details = details
        self.retry_after = retry_after

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
        }
        if self.reason:
            body["reason"] = self.reason
        if self.details is not None:
            body["details"] = self.details
        body["code"] = self.code
        return body

    def headers(self) -> dict[str, str]:
        retry = self.retry_after
        if retry is None and self.details:
            retry = self.details.get("retryAfterSeconds")
        return {"Retry-After": str(retry)} if retry else {}


def _details(name: str, group: str, kind: str, **extra: Any) -> dict[str, Any]:
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    details["kind"] = kind
    details.update(extra)
    return details


def qualified(resource: str, group: str) -> str:
    return f"{resource}.{group}" if group else resource


def not_found(resource: str, name: str, group: str = "") -> ApiError:
    return ApiError(
        404,
        f'{qualified(resource, group)} "{name}" not found',
        details=_details(name, group, resource),
    )


def already_exists(resource: str, name: str, group: str = "") -> ApiError:
    return ApiError(
        409,
        f'{qualified(resource, group)} "{name}" already exists',
        reason="AlreadyExists",
        details=_details(name, group, resource),
    )


def conflict(resource: str, name: str, group: str = "") -> ApiError:
    message = (
        f'Operation cannot be fulfilled on {qualified(resource, group)} "{name}": the object has '
        "been modified; please apply your changes to the latest version and try again"
    )
    return ApiError(409, message, reason="Conflict", details=_details(name, group, resource))


def invalid(kind: str, name: str, causes: list[dict[str, str]], group: str = "") -> ApiError:
    """422 Invalid; ``causes`` are {reason, message, field} like field.ErrorList."""
    rendered = [_render_cause(c) for c in causes]
    aggregate = rendered[0] if len(rendered) == 1 else "[" + ", ".join(rendered) + "]"
    details = _details(name, group, kind, causes=causes)
    return ApiError(422, f'{kind} "{name}" is invalid: {aggregate}', details=details)


def _render_cause(cause: dict[str, str]) -> str:
    return f"{cause['field']}: {cause['message']}"


def field_required(field: str, detail: str = "") -> dict[str, str]:
    message = "Required value" + (f": {detail}" if detail else "")
    return {"reason": "FieldValueRequired", "message": message, "field": field}


def field_invalid(field: str, value: Any, detail: str) -> dict[str, str]:
    shown = f'"{value}"' if isinstance(value, str) else str(value)
    return {
        "reason": "FieldValueInvalid",
        "message": f"Invalid value: {shown}: {detail}",
        "field": field,
    }


def forbidden(resource: str, name: str, group: str, why: str) -> ApiError:
    what = qualified(resource, group)
    message = f'{what} "{name}" is forbidden: {why}' if name else f"{what} is forbidden: {why}"
    return ApiError(403, message, details=_details(name, group, resource))


def bad_request(message: str) -> ApiError:
    return ApiError(400, message)


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized")


def method_not_allowed() -> ApiError:
    return ApiError(
        405, "the server does not allow this method on the requested resource", details={}
    )


def path_not_found() -> ApiError:
    return ApiError(404, "the server could not find the requested resource", details={})


def too_many_requests(
    message: str, retry_after: int = 0, causes: list[Any] | None = None
) -> ApiError:
    details: dict[str, Any] = {}
    if causes:
        details["causes"] = causes
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    return ApiError(429, message, details=details)


def internal(message: str) -> ApiError:
    return ApiError(
        500, f"Internal error occurred: {message}", details={"causes": [{"message": message}]}
    )
