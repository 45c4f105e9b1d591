"""What the relay forwards and how, without Home Assistant: unit-tested on its own
(tests/test_frames.py).

aabridge decodes Apple's proximity-pairing messages (company 0x004C, message type 0x07: AirPods
and Beats, their placement and batteries) and Google Fast Pair service data (UUID FE2C: the
account key filter and its battery). Everything else a scanner hears is of no use to it, so it
is not published: most of a home's advertisements are phones, TVs and sensors.
"""

from __future__ import annotations

import re

APPLE = 0x004C
PROXIMITY_PAIRING = 0x07
FAST_PAIR_UUID = "0000fe2c-0000-1000-8000-00805f9b34fb"


def apple_message_types(data: bytes) -> list[int]:
    """The message types of Apple's manufacturer data (type, length, value; repeated)."""
    types = []
    index = 0
    while index + 1 < len(data):
        types.append(data[index])
        index += 2 + data[index + 1]
    return types


def usable(manufacturer_data: dict[int, bytes], service_data: dict[str, bytes]) -> bool:
    """Whether aabridge can use the advertisement: proximity pairing or Fast Pair."""
    apple = manufacturer_data.get(APPLE)
    if apple is not None and PROXIMITY_PAIRING in apple_message_types(apple):
        return True
    return FAST_PAIR_UUID in service_data


def node_name(name: str, source: str) -> str:
    """The scanner's level in the topics: its name in lower case with every run of other
    characters than letters and digits made `_` (`Living room proxy` -> `living_room_proxy`), so
    it is one topic level that `rooms:` can name; its source address when the name has none."""
    slug = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    if not slug:
        slug = re.sub(r"[^a-z0-9]+", "_", source.lower()).strip("_") or "scanner"
    return slug[:64]


def payload(
    address: str,
    rssi: int,
    manufacturer_data: dict[int, bytes],
    service_data: dict[str, bytes],
    local_name: str | None,
    tx_power: int | None,
    scanner: str,
    area: str | None,
) -> dict:
    """OpenMQTTGateway's shape (what aabridge's `ha_relay` format parses): `id`, `rssi`,
    `manufacturerdata` (company id little-endian first, as on air), `servicedatauuid` and
    `servicedata`, `name`, `txpower`; and the relay's own `scanner` and `area`."""
    message: dict = {"id": address.upper(), "rssi": int(rssi)}
    apple = manufacturer_data.get(APPLE)
    if apple is not None and PROXIMITY_PAIRING in apple_message_types(apple):
        message["manufacturerdata"] = "4c00" + apple.hex()
    fast_pair = service_data.get(FAST_PAIR_UUID)
    if fast_pair is not None:
        message["servicedatauuid"] = "fe2c"
        message["servicedata"] = fast_pair.hex()
    if local_name:
        message["name"] = local_name
    # Home Assistant writes -127 for "not advertised".
    if tx_power is not None and -127 < tx_power <= 20:
        message["txpower"] = int(tx_power)
    message["scanner"] = scanner
    if area:
        message["area"] = area
    return message


def topic_address(address: str) -> str:
    """The address as the topic's last level (`A1B2C3D4E5F6`, as OpenMQTTGateway writes it)."""
    return address.replace(":", "").upper()
