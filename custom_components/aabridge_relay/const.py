"""Constants of the aabridge relay (docs/mqtt-api.md, "Home Assistant relay")."""

DOMAIN = "aabridge_relay"

# The topics' first level. Fixed, because the shipped broker ACL (docker/mosquitto.acl) grants
# Home Assistant's MQTT user exactly this tree and aabridge's `ha_relay` format reads it.
TOPIC_ROOT = "aabridge_relay"

CONF_INTERVAL = "interval"
DEFAULT_INTERVAL = 1.0
MINIMUM_INTERVAL = 0.5
MAXIMUM_INTERVAL = 60.0

# Each scanner's status (`<root>/<node>/LWT`, retained) is said again this often, so aabridge
# can tell a relay that stopped (its `relay_silent` problem after three missed) from a quiet room.
HEARTBEAT_SECONDS = 60.0
# A scanner that has heard nothing for this long is said `offline` (an ESPHome proxy unplugged
# but not yet removed by Home Assistant); HA's own scanner watchdog uses 90 s.
STALE_SECONDS = 300.0
# At most this many advertisements go out per poll: a burst beyond it waits for the next poll
# (the newest advertisement of an address is what counts, so nothing is lost but the older).
MAXIMUM_PER_POLL = 1000
