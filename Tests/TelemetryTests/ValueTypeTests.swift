import Testing
@testable import Telemetry

@Suite struct BluetoothAddressTests {
    @Test(arguments: ["a1:b2:c3:d4:e5:f6", "A1:B2:C3:D4:E5:F6", "a1B2c3D4e5F6", "A1B2C3D4E5F6"])
    func parsesEveryGatewayForm(_ text: String) throws {
        let address = try #require(BluetoothAddress(text))
        #expect(address.description == "A1:B2:C3:D4:E5:F6")
        #expect(address.hexID == "A1B2C3D4E5F6")
        #expect(address.rawValue == 0xA1B2_C3D4_E5F6)
    }

    @Test(arguments: ["", "A1:B2:C3:D4:E5", "A1:B2:C3:D4:E5:F", "A1-B2-C3-D4-E5-F6", "G1:B2:C3:D4:E5:F6", "A1B2C3D4E5F", "A1B2C3D4E5F6A", "A1:B2:C3:D4:E5:F6:"])
    func rejectsMalformed(_ text: String) {
        #expect(BluetoothAddress(text) == nil)
    }

    @Test func resolvablePrivateBits() throws {
        #expect(try #require(BluetoothAddress("70:81:94:0D:FB:AA")).isResolvablePrivate)
        #expect(try #require(BluetoothAddress("F0:81:94:0D:FB:AA")).isResolvablePrivate == false)
        #expect(try #require(BluetoothAddress("30:81:94:0D:FB:AA")).isResolvablePrivate == false)
        let address = try #require(BluetoothAddress("70:81:94:0D:FB:AA"))
        #expect(address.prand == 0x708194)
        #expect(address.hash == 0x0DFBAA)
    }
}

@Suite struct BluetoothUUIDTests {
    @Test(arguments: ["fe2c", "FE2C", "0xfe2c", "0XFE2C", "0000fe2c", "0000fe2c-0000-1000-8000-00805f9b34fb", "0000FE2C00001000800000805F9B34FB"])
    func shortAndLongFormsAreEqual(_ text: String) throws {
        let uuid = try #require(BluetoothUUID(text))
        #expect(uuid == BluetoothUUID(uuid16: 0xFE2C))
        #expect(uuid.uuid16 == 0xFE2C)
        #expect(uuid.description == "FE2C")
    }

    @Test func vendorUUIDKeepsItsLongForm() throws {
        let uuid = try #require(BluetoothUUID("a0ba0100-2a8d-11e4-a1b3-0002a5d5c51b"))
        #expect(uuid.uuid16 == nil)
        #expect(uuid.description == "A0BA0100-2A8D-11E4-A1B3-0002A5D5C51B")
        #expect(uuid != BluetoothUUID(uuid16: 0x0100))
    }

    @Test(arguments: ["", "fe2", "fe2cx", "0x", "0000fe2c-0000-1000-8000_00805f9b34fb", "0000fe2c-00001000-8000-00805f9b34fb0", "123456"])
    func rejectsMalformed(_ text: String) {
        #expect(BluetoothUUID(text) == nil)
    }
}

@Suite struct HexTests {
    @Test func decodesBothCases() {
        #expect(Hex.decode("00aAfF7f") == [0x00, 0xAA, 0xFF, 0x7F])
        #expect(Hex.decode("") == [])
    }

    @Test(arguments: ["0", "abc", "0g", "0x00", " 00", "4c00 07"])
    func rejectsOddLengthAndNonHex(_ text: String) {
        #expect(Hex.decode(text) == nil)
    }

    @Test func encodes() {
        #expect(Hex.encode([0x4C, 0x00, 0xAB]) == "4c00ab")
        #expect(Hex.encode([0x4C, 0x00, 0xAB], uppercase: true) == "4C00AB")
    }
}

@Suite struct TopicPatternTests {
    @Test func singleLevelWildcardCapturesTheGateway() throws {
        let pattern = try #require(TopicPattern("home/+/BTtoMQTT/#"))
        #expect(pattern.match("home/gw1/BTtoMQTT/AABBCCDDEEFF") == ["gw1", "AABBCCDDEEFF"])
        // MQTT: `#` also matches the parent level, so the bare config topic matches too.
        #expect(pattern.match("home/gw1/BTtoMQTT") == ["gw1", ""])
        #expect(pattern.match("home/gw1/BTtoMQTT/a/b") == ["gw1", "a/b"])
        #expect(pattern.match("home/gw1/LWT") == nil)
        #expect(pattern.match("home/gw1") == nil)
        #expect(pattern.match("other/gw1/BTtoMQTT/x") == nil)
    }

    @Test func exactLevels() throws {
        let pattern = try #require(TopicPattern("tele/+/BLE"))
        #expect(pattern.match("tele/t1/BLE") == ["t1"])
        #expect(pattern.match("tele/t1/BLE/x") == nil)
        #expect(pattern.match("tele//BLE") == [""])
        #expect(pattern.match("tele/t1") == nil)
        #expect(try #require(TopicPattern("a/b")).match("a/b") == [])
    }

    @Test func wildcardsDoNotMatchDollarTopics() throws {
        #expect(try #require(TopicPattern("#")).match("$SYS/broker") == nil)
        #expect(try #require(TopicPattern("+/broker")).match("$SYS/broker") == nil)
        #expect(try #require(TopicPattern("$SYS/#")).match("$SYS/broker") == ["broker"])
    }

    @Test(arguments: ["", "a/#/b", "a/b#", "a/+b", "a+/b"])
    func rejectsInvalidFilters(_ filter: String) {
        #expect(TopicPattern(filter) == nil)
    }
}
