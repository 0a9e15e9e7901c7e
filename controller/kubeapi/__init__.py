"""Each room's Kubernetes API (issue #36): discovery, objects made from the room's stored
views, kube-apiserver's Table printers, selectors, watch, Status errors and bearer tokens.
Pure modules but ``store`` (the room service that reads the rows) and ``views`` (the HTTP
adapter); see docs/architecture.md, "The Kubernetes API of a room"."""
