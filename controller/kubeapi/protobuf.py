"""Just enough of Kubernetes' protobuf to read a SelfSubjectAccessReview (kubectl 1.32+
posts ``auth can-i`` as ``application/vnd.kubernetes.protobuf``): the ``k8s\\0`` envelope
(runtime.Unknown: typeMeta 1, raw 2) and SelfSubjectAccessReview's spec (field 2:
resourceAttributes 1 {namespace 1, verb 2, group 3, version 4, resource 5, subresource 6,
name 7}, nonResourceAttributes 2 {path 1, verb 2}), as generated.proto in k8s.io/api
numbers them."""

from __future__ import annotations

from typing import Any

from .errors import bad_request

MAGIC = b"k8s\x00"
RESOURCE_FIELDS = {
    1: "namespace",
    2: "verb",
    3: "group",
    4: "version",
    5: "resource",
    6: "subresource",
    7: "name",
}
NON_RESOURCE_FIELDS = {1: "path", 2: "verb"}


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        if i >= len(data) or shift > 63:
            raise bad_request("protobuf: a truncated varint")
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7


def fields(data: bytes) -> dict[int, list[bytes | int]]:
    """The top-level fields of a message (length-delimited ones as bytes)."""
    out: dict[int, list[bytes | int]] = {}
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
            out.setdefault(number, []).append(value)
        elif wire == 2:
            size, i = _varint(data, i)
            if i + size > len(data):
                raise bad_request("protobuf: a field runs past the end of the message")
            out.setdefault(number, []).append(data[i : i + size])
            i += size
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            raise bad_request(f"protobuf: wire type {wire} is not read here")
    return out


def _strings(data: bytes, names: dict[int, str]) -> dict[str, str]:
    out = {}
    for number, values in fields(data).items():
        if number in names and isinstance(values[-1], bytes):
            out[names[number]] = values[-1].decode("utf-8", "replace")
    return out


def access_review_spec(body: bytes) -> dict[str, Any]:
    if not body.startswith(MAGIC):
        raise bad_request("protobuf: the body does not start with the k8s envelope")
    raw = fields(body[len(MAGIC) :]).get(2)
    if not raw or not isinstance(raw[-1], bytes):
        raise bad_request("protobuf: the envelope holds no object")
    spec_raw = fields(raw[-1]).get(2)
    spec: dict[str, Any] = {}
    if spec_raw and isinstance(spec_raw[-1], bytes):
        parts = fields(spec_raw[-1])
        if parts.get(1) and isinstance(parts[1][-1], bytes):
            spec["resourceAttributes"] = _strings(parts[1][-1], RESOURCE_FIELDS)
        if parts.get(2) and isinstance(parts[2][-1], bytes):
            spec["nonResourceAttributes"] = _strings(parts[2][-1], NON_RESOURCE_FIELDS)
    return spec
