import Testing

@testable import AccessoryKit

/// The one set of tests for the Bluetooth vocabulary every module shares (AccessoryKit's
/// values; Telemetry, Storage and the bridge have no copies of their own).
@Suite("Addresses, UUIDs, hex, manufacturer data, hardware")
struct ValueTypeTests {
    // MARK: BluetoothAddress: the one grammar (docs/mqtt-api.md, "Conventions")

    @Test(
        "BluetoothAddress parses colon, dash and 12-hex forms in any case",
        arguments: [
            "A1:B2:C3:D4:E5:F6", "a1:b2:c3:d4:e5:f6", "a1:B2:c3:D4:e5:F6", "A1-B2-C3-D4-E5-F6", "a1-b2-c3-d4-e5-f6",
            "a1b2c3d4e5f6", "A1B2C3D4E5F6", "a1B2c3D4e5F6",
        ])
    func addressParses(text: String) throws {
        let address = try #require(BluetoothAddress(text))
        #expect(address.description == "A1:B2:C3:D4:E5:F6")
        #expect(address.topicID == "A1B2C3D4E5F6")
        #expect(address.rawValue == 0xA1B2_C3D4_E5F6)
        #expect(address.bytes == [0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6])
        // The telemetry parsers read addresses from payload bytes: same grammar.
        var utf8 = text
        #expect(utf8.withUTF8 { BluetoothAddress.parse(UnsafeRawBufferPointer($0)) } == address)
    }

    @Test(
        "BluetoothAddress refuses anything else",
        arguments: [
            "", "A1:B2:C3:D4:E5", "A1:B2:C3:D4:E5:F", "A1:B2:C3:D4:E5:F6:07", "A1:B2:C3:D4:E5:F6:", "A1B2C3D4E5", "A1B2C3D4E5F",
            "A1B2C3D4E5F6A", "G1:B2:C3:D4:E5:F6", "A1:B2:C3:D4:E5F6", "A1.B2.C3.D4.E5.F6", "A1 B2 C3 D4 E5 F6",
            // One separator throughout: a mix is a typo, not an address.
            "A1:B2-C3:D4:E5:F6", "A1-B2-C3-D4-E5:F6",
        ])
    func addressRefuses(text: String) {
        #expect(BluetoothAddress(text) == nil)
    }

    @Test func addressFromBytesNeedsExactlySix() {
        #expect(BluetoothAddress(bytes: [1, 2, 3, 4, 5, 6])?.description == "01:02:03:04:05:06")
        #expect(BluetoothAddress(bytes: [1, 2, 3, 4, 5]) == nil)
        #expect(BluetoothAddress(bytes: [1, 2, 3, 4, 5, 6, 7]) == nil)
    }

    @Test func resolvablePrivateBits() throws {
        #expect(try #require(BluetoothAddress("70:81:94:0D:FB:AA")).isResolvablePrivate)
        #expect(try #require(BluetoothAddress("40:00:00:00:00:00")).isResolvablePrivate)
        #expect(try #require(BluetoothAddress("F0:81:94:0D:FB:AA")).isResolvablePrivate == false)
        #expect(try #require(BluetoothAddress("30:81:94:0D:FB:AA")).isResolvablePrivate == false)
        #expect(try #require(BluetoothAddress("80:81:94:0D:FB:AA")).isResolvablePrivate == false)
        let address = try #require(BluetoothAddress("70:81:94:0D:FB:AA"))
        #expect(address.prand == 0x708194)
        #expect(address.hash == 0x0DFBAA)
    }

    // MARK: BluetoothUUID

    @Test(
        "16-bit UUIDs expand on the Bluetooth base UUID",
        arguments: [
            "FE2C", "fe2c", "0xFE2C", "0XFE2C", "0xfe2c", "0000FE2C", "0000fe2c", "0000FE2C-0000-1000-8000-00805F9B34FB",
            "0000fe2c-0000-1000-8000-00805f9b34fb", "0000fe2c00001000800000805f9b34fb",
        ])
    func shortUUIDEqualsLongForm(text: String) throws {
        let uuid = try #require(BluetoothUUID(text))
        #expect(uuid == BluetoothUUID(shortValue: 0xFE2C))
        #expect(uuid.shortValue == 0xFE2C)
        #expect(uuid.description == "FE2C")
        #expect(uuid.uuidString == "0000FE2C-0000-1000-8000-00805F9B34FB")
    }

    @Test func customUUIDKeepsAll128Bits() throws {
        let uuid = try #require(BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E"))
        #expect(uuid.shortValue == nil)
        #expect(uuid.description == "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
        #expect(uuid != BluetoothUUID("6E400002-B5A3-F393-E0A9-E50E24DCCA9E"))
        #expect(BluetoothUUID(bigEndianBytes: uuid.bigEndianBytes) == uuid)
        let vendor = try #require(BluetoothUUID("a0ba0100-2a8d-11e4-a1b3-0002a5d5c51b"))
        #expect(vendor.description == "A0BA0100-2A8D-11E4-A1B3-0002A5D5C51B")
        #expect(vendor != BluetoothUUID(shortValue: 0x0100))
    }

    @Test func thirtyTwoBitUUIDsExpandToo() throws {
        #expect(BluetoothUUID("0001FE2C") == BluetoothUUID(uuid32: 0x0001_FE2C))
        #expect(BluetoothUUID(uuid32: 0x0001_FE2C).shortValue == nil)
        #expect(BluetoothUUID(uuid32: 0xFE2C) == BluetoothUUID(shortValue: 0xFE2C))
    }

    @Test(
        "malformed UUIDs are refused",
        arguments: [
            "", "FE2", "FE2CX", "0x", "ZZZZ", "123456", "6E400001-B5A3-F393-E0A9", "0000fe2c-0000-1000-8000_00805f9b34fb",
            "0000fe2c-00001000-8000-00805f9b34fb0",
        ])
    func uuidRefuses(text: String) {
        #expect(BluetoothUUID(text) == nil)
    }

    // MARK: Hex, ManufacturerData

    @Test func hexDecodesBothCases() {
        #expect(Hex.decode("00aAfF7f") == [0x00, 0xAA, 0xFF, 0x7F])
        #expect(Hex.decode("") == [])
    }

    @Test("Hex.decode refuses odd lengths, non-hex and prefixes", arguments: ["0", "abc", "0g", "0x00", " 00", "4c00 07"])
    func hexRefuses(text: String) {
        #expect(Hex.decode(text) == nil)
    }

    @Test func hexBytesAcceptsThePrefixPeopleWrite() {
        #expect(Hex.bytes("0719ff") == [0x07, 0x19, 0xFF])
        #expect(Hex.bytes("0x0719") == [0x07, 0x19])
        #expect(Hex.bytes("0X0719") == [0x07, 0x19])
        #expect(Hex.bytes("071") == nil)
        #expect(Hex.bytes("07zz") == nil)
    }

    @Test func hexEncodes() {
        #expect(Hex.encode([0x4C, 0x00, 0xAB]) == "4c00ab")
        #expect(Hex.encode([0x0A, 0xFF], uppercase: true) == "0AFF")
    }

    @Test func manufacturerDataReadsCompanyLittleEndian() throws {
        let data = try #require(ManufacturerData(raw: [0x4C, 0x00, 0x07, 0x19]))
        #expect(data.companyIdentifier == 0x004C)
        #expect(data.payload == [0x07, 0x19])
        #expect(ManufacturerData(raw: [0x4C, 0x00])?.payload == [])
        #expect(ManufacturerData(raw: [0x4C]) == nil)
    }

    // MARK: HardwareType: worn -> placement (domain.md, "Placement from telemetry")

    @Test(
        "a wear sensor maps by hardware type",
        arguments: [
            (true, HardwareType.inEarBud, AccessoryControlDevice.Placement.inEar),
            (true, .onEarHeadphone, .onHead), (true, .overEarHeadphone, .overTheEar),
            (false, .inEarBud, .offHead), (false, .onEarHeadphone, .offHead), (false, .overEarHeadphone, .offHead),
        ])
    func wearSensorMapping(worn: Bool, hardware: HardwareType, expected: AccessoryControlDevice.Placement) {
        #expect(hardware.placement(worn: worn) == expected)
        #expect(expected.isWorn == worn)
    }

    // MARK: Trimming white space (what Foundation's trimmingCharacters did for the executable)

    @Test(
        "trimmingWhitespace drops spaces, tabs and line breaks at both ends only",
        arguments: [
            ("  Alice's AirPods \t\n", "Alice's AirPods"), ("1234\n", "1234"), ("\r\n x y \u{00A0}", "x y"), ("a", "a"),
            ("", ""), (" \t\n ", ""),
        ])
    func trimmingWhitespace(text: String, expected: String) {
        #expect(text.trimmingWhitespace == expected)
        #expect(text[...].trimmingWhitespace == expected)
    }
}
