"""ASGI entry point: HTTP through Django, websockets through Channels (origin-checked)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")
django_asgi_app = get_asgi_application()  # first, so the app registry is ready

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402

from controller.live import codes  # noqa: E402
from controller.live.routing import websocket_urlpatterns  # noqa: E402
from playground import httplimits, logredact, wire, wslimits  # noqa: E402

logredact.install()  # Daphne's access log: no ?token= value in it

wslimits.install(  # refused before it is buffered; a socket that does not read is closed
    settings.PLAYGROUND_MAX_MESSAGE_BYTES, settings.PLAYGROUND_MAX_UNSENT_BYTES, codes.NOT_READING
)
httplimits.install(httplimits.limits_for(settings))  # 413 from the headers

application = wire.Scope(  # a socket's Wire (what it has unsent), a big body read lazily
    ProtocolTypeRouter(
        {
            "http": django_asgi_app,
            "websocket": AllowedHostsOriginValidator(
                AuthMiddlewareStack(URLRouter(websocket_urlpatterns))
            ),
        }
    )
)
