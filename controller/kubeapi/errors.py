"""Errors as kube-apiserver answers them: a ``metav1.Status`` with the HTTP code, the
reason and details (k8s.io/apimachinery/pkg/api/errors: NewNotFound, NewForbidden, ...).
kubectl prints ``Error from server (Reason): message`` from it."""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """A request refused: ``status()`` is the Status object the client gets."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = headers or {}

    def status(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details is not None:
            out["details"] = self.details
        return out


def _qualified(group: str, resource: str) -> str:
    """schema.GroupResource.String(): ``resource.group``, or ``resource`` for core."""
    return f"{resource}.{group}" if group else resource


def not_found(group: str, resource: str, name: str) -> ApiError:
    """errors.NewNotFound: ``nodes "x" not found``."""
    return ApiError(
        404,
        "NotFound",
        f'{_qualified(group, resource)} "{name}" not found',
        {"name": name, "group": group, "kind": resource}
        if group
        else {"name": name, "kind": resource},
    )


def forbidden(user: str, verb: str, group: str, resource: str, name: str, why: str) -> ApiError:
    """errors.NewForbidden, with the authorizer's message as RBAC words it."""
    what = _qualified(group, resource)
    scope = f' "{name}"' if name else ""
    return ApiError(
        403,
        "Forbidden",
        f'{what}{scope} is forbidden: User "{user}" cannot {verb} resource "{resource}" in API '
        f'group "{group}": {why}',
        {"name": name, "group": group, "kind": resource},
    )


def unauthorized(message: str = "Unauthorized") -> ApiError:
    return ApiError(401, "Unauthorized", message)


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def invalid(kind: str, name: str, message: str, field: str = "") -> ApiError:
    """errors.NewInvalid: 422 ``Kind "name" is invalid: field: message``."""
    causes = [{"reason": "FieldValueInvalid", "message": message, "field": field}]
    text = f'{kind} "{name}" is invalid: {field + ": " if field else ""}{message}'
    return ApiError(422, "Invalid", text, {"name": name, "kind": kind, "causes": causes})


def method_not_allowed(verb: str, what: str) -> ApiError:
    return ApiError(
        405,
        "MethodNotAllowed",
        f"the server does not allow this method on the requested resource ({verb} {what})",
    )


def unsupported_media_type(content_type: str) -> ApiError:
    return ApiError(
        415,
        "UnsupportedMediaType",
        f'the body of the request was in an unknown format - accepted media types include: application/json, application/strategic-merge-patch+json, application/merge-patch+json (got "{content_type}")',
    )


def not_acceptable(accept: str) -> ApiError:
    return ApiError(
        406,
        "NotAcceptable",
        f'only the following media types are accepted: application/json (got "{accept}")',
    )


def gone(message: str) -> ApiError:
    """410 Expired: a watch from before the room's history (a rewind) starts over."""
    return ApiError(410, "Expired", message)


def too_many_requests(message: str, retry_after: int = 1) -> ApiError:
    return ApiError(
        429,
        "TooManyRequests",
        message,
        {"retryAfterSeconds": retry_after},
        {"Retry-After": str(retry_after)},
    )


def too_large(message: str) -> ApiError:
    return ApiError(413, "RequestEntityTooLarge", message)
