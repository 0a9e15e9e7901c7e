"""JSON answers of the API (objects, lists, Tables, Status errors) as Django responses."""

from __future__ import annotations

from typing import Any

import orjson
from django.http import HttpResponse

from .errors import ApiError

JSON = "application/json"


def respond(body: Any, status: int = 200, content_type: str = JSON) -> HttpResponse:
    return HttpResponse(orjson.dumps(body), status=status, content_type=content_type)


def status_response(error: ApiError) -> HttpResponse:
    response = respond(error.status(), error.code)
    for key, value in error.headers.items():
        response[key] = value
    return response
