import Testing
@testable import AccessoryKit

@Suite("Addresses, UUIDs, manufacturer data")
struct ValueTypeTests {
    @Test("BluetoothAddress parses colon, dash and 12-hex forms in any case", arguments: [
        "A1:B2:C3:D4:E5:F6", "a1:b2:c3:d4:e5:f6", "A1-B2-C3-D4-E5-F6", "a1b2c3d4e5f6", "A1B2C3D4E5F6",
    ])
    func addressParses(text: String) throws {
        let address = try #require(BluetoothAddress(text))
        #expect(address.description == "A1:B2:C3:D4:E5:F6")
        #expect(address.topicID == "A1B2C3D4E5F6")
        #expect(address.bytes == [0xA1, 0xB2, 0xC3, 0xD4, 0xE5, 0xF6])
    }

    @Test("BluetoothAddress refuses anything that is not 6 bytes", arguments: [
        "", "A1:B2:C3:D4:E5", "A1:B2:C3:D4:E5:F6:07", "A1B2C3D4E5", "G1:B2:C3:D4:E5:F6", "A1:B2:C3:D4:E5F6", "A1.B2.C3.D4.E5.F6",
    ])
    func addressRefuses(text: String) {
        #expect(BluetoothAddress(text) == nil)
    }

    @Test func addressFromBytesNeedsExactlySix() {
        #expect(BluetoothAddress(bytes: [1, 2, 3, 4, 5, 6])?.description == "01:02:03:04:05:06")
        #expect(BluetoothAddress(bytes: [1, 2, 3, 4, 5]) == nil)
        #expect(BluetoothAddress(bytes: [1, 2, 3, 4, 5, 6, 7]) == nil)
    }

    @Test("16-bit UUIDs expand on the Bluetooth base UUID", arguments: [
        "FE2C", "fe2c", "0xFE2C", "0000FE2C", "0000FE2C-0000-1000-8000-00805F9B34FB", "0000fe2c00001000800000805f9b34fb",
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
    }

    @Test("malformed UUIDs are refused", arguments: ["", "FE2", "FE2CX", "6E400001-B5A3-F393-E0A9", "ZZZZ"])
    func uuidRefuses(text: String) {
        #expect(BluetoothUUID(text) == nil)
    }

    @Test func manufacturerDataReadsCompanyLittleEndian() throws {
        let data = try #require(ManufacturerData(raw: [0x4C, 0x00, 0x07, 0x19]))
        #expect(data.companyIdentifier == 0x004C)
        #expect(data.payload == [0x07, 0x19])
        #expect(ManufacturerData(raw: [0x4C]) == nil)
    }

    @Test func hexParsesAndFormats() {
        #expect(Hex.bytes("0719ff") == [0x07, 0x19, 0xFF])
        #expect(Hex.bytes("0x0719") == [0x07, 0x19])
        #expect(Hex.bytes("071") == nil)
        #expect(Hex.bytes("07zz") == nil)
        #expect(Hex.string([0x0A, 0xFF]) == "0AFF")
    }
}
