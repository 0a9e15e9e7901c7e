"""The websocket side of a room (docs/architecture.md).

- ``consumers``  the room websocket: a protocol adapter only (snapshot on connect, the group's
                 deltas in order, operator messages to one room service each)
- ``routing``    its URL
- ``roles``      who may operate a room (the views ask it too)
- ``presence``   who is watching, kept in Redis; when someone last watched (idle rooms)
- ``deltas``     one snapshot per room version, shared by every client (``snapshot.json`` and
                 the websocket's snapshot on connect)
"""
