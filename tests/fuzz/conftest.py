"""The app fixtures (tests/app/conftest.py) for the targets that go through the room services
and the consumer."""

from tests.app.conftest import fresh_channel_layer  # noqa: F401
