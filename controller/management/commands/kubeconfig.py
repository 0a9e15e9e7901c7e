"""``manage.py kubeconfig ROOM [--role viewer|operator] [--server URL]``: a room's kubeconfig
(its Kubernetes API on the https port, the CA, a bearer token) on stdout; `make run` writes
the demo room's into .run/. The operator's holds the room's operator token: keep it secret."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from controller.kubeapi import auth, tls
from controller.kubeapi.kubeconfig import ca_of, kubeconfig
from controller.models import Room


class Command(BaseCommand):
    help = "Print a room's kubeconfig (its Kubernetes API over https, with a bearer token)."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("room", help="the room's address (slug), e.g. demo")
        parser.add_argument("--role", choices=(auth.VIEWER, auth.OPERATOR), default=auth.VIEWER)
        parser.add_argument(
            "--server",
            default="",
            help="https://host:port of the API (default: https://localhost:KUBEAPI_PORT)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        room = Room.objects.filter(slug=options["room"]).first()
        if room is None:
            raise CommandError(f"room: no room {options['room']!r}")
        role = options["role"]
        token = room.operator_token if role == auth.OPERATOR else auth.viewer_token(room)
        server = options["server"] or f"https://localhost:{settings.PLAYGROUND_KUBEAPI_PORT}"
        ca = ca_of(tls.ensure(settings.PLAYGROUND_KUBEAPI_TLS_DIR))
        self.stdout.write(kubeconfig(server, room.slug, role, token, ca), ending="")
