"""What the relay picks and the payload aabridge parses (frames.py)."""

from aabridge_relay import frames

IN_EAR = bytes.fromhex("0719010e202a850600000a7d9fff27234873d4305e0fed1b39e2b8")


def test_proximity_pairing_is_usable():
    assert frames.usable({0x004C: IN_EAR}, {})


def test_other_apple_messages_are_not():
    # Nearby Info (0x10) and an iBeacon (0x02): aabridge decodes neither.
    assert not frames.usable({0x004C: bytes.fromhex("1005031c1a2b3c")}, {})
    assert not frames.usable({0x004C: bytes.fromhex("0215" + "00" * 21)}, {})


def test_proximity_pairing_after_another_message():
    assert frames.apple_message_types(bytes.fromhex("100201ff") + IN_EAR) == [0x10, 0x07]
    assert frames.usable({0x004C: bytes.fromhex("100201ff") + IN_EAR}, {})


def test_a_truncated_apple_message_is_read_safely():
    assert frames.apple_message_types(b"\x07") == []
    assert not frames.usable({0x004C: b"\x07"}, {})


def test_fast_pair_service_data_is_usable():
    assert frames.usable({}, {frames.FAST_PAIR_UUID: b"\x00\x11\x22"})
    assert not frames.usable({0x0006: b"\x01\x02"}, {"0000feaa-0000-1000-8000-00805f9b34fb": b"\x00"})


def test_payload_is_openmqttgateway_shaped():
    message = frames.payload("f1:e2:d3:c4:b5:a6", -55, {0x004C: IN_EAR}, {}, None, 4, "Living room proxy", "Living room")
    assert message == {
        "id": "F1:E2:D3:C4:B5:A6", "rssi": -55, "manufacturerdata": "4c00" + IN_EAR.hex(), "txpower": 4,
        "scanner": "Living room proxy", "area": "Living room",
    }


def test_payload_with_fast_pair_and_no_area():
    message = frames.payload("F1:E2:D3:C4:B5:A6", -70, {}, {frames.FAST_PAIR_UUID: b"\xab"}, "Pixel Buds", None, "x", None)
    assert message["servicedatauuid"] == "fe2c" and message["servicedata"] == "ab"
    assert message["name"] == "Pixel Buds" and "area" not in message and "manufacturerdata" not in message


def test_an_impossible_or_unknown_tx_power_is_left_out():
    assert "txpower" not in frames.payload("F1:E2:D3:C4:B5:A6", -70, {}, {}, None, 127, "x", None)
    assert "txpower" not in frames.payload("F1:E2:D3:C4:B5:A6", -70, {}, {}, None, -127, "x", None)


def test_node_names_are_one_topic_level():
    assert frames.node_name("Living room proxy", "AA:BB") == "living_room_proxy"
    assert frames.node_name("hci0 (00:1A:7D:DA:71:13)", "00:1A:7D:DA:71:13") == "hci0_00_1a_7d_da_71_13"
    assert frames.node_name("+/#", "AA:BB:CC:DD:EE:FF") == "aa_bb_cc_dd_ee_ff"
    assert "/" not in frames.node_name("a/b", "x") and "+" not in frames.node_name("a+b", "x")


def test_topic_address():
    assert frames.topic_address("f1:e2:d3:c4:b5:a6") == "F1E2D3C4B5A6"
