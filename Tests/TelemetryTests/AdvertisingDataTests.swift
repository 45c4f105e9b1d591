import AccessoryKit
import Testing

@testable import Telemetry

@Suite struct AdvertisingDataTests {
    static func parse(_ hex: String) throws(TelemetryRejection) -> AdvertisingData {
        try AdvertisingData(parsing: Hex.decode(hex)!)
    }

    @Test func everyStructureKind() throws {
        let data = try Self.parse(
            "020106" // flags 0x06
                + "0503" + "2cfe0f18" // complete 16-bit list: FE2C, 180F
                + "1107" + "1bc5d5a50200b3a1e4112a8d0001baa0" // complete 128-bit list (little-endian)
                + "0708" + "4163" + "6d65" + "2d53" // shortened name "Acme-S"
                + "0c09" + "41636d652053747564696f" // complete name "Acme Studio"
                + "020a" + "f4" // TX power -12
                + "0616" + "2cfe" + "010203" // service data FE2C
                + "1321" + "1bc5d5a50200b3a1e4112a8d0001baa0" + "aa55" // service data 128
                + "06ff" + "4c00" + "071901" // manufacturer 0x004C
                + "0303" + "0a18") // a second (incomplete) list
        #expect(data.flags == 0x06)
        #expect(data.name == "Acme Studio")
        #expect(data.shortenedName == "Acme-S")
        #expect(data.txPower == -12)
        let vendor = try #require(BluetoothUUID("a0ba0100-8d2a-11e4-a1b3-0002a5d5c51b"))
        #expect(
            data.serviceUUIDs == [
                BluetoothUUID(shortValue: 0xFE2C), BluetoothUUID(shortValue: 0x180F), vendor, BluetoothUUID(shortValue: 0x180A),
            ])
        #expect(
            data.serviceData == [
                ServiceData(uuid: BluetoothUUID(shortValue: 0xFE2C), data: [1, 2, 3]), ServiceData(uuid: vendor, data: [0xAA, 0x55]),
            ])
        #expect(data.manufacturerData == [ManufacturerData(companyIdentifier: 0x004C, payload: [0x07, 0x19, 0x01])])
    }

    @Test func zeroLengthEndsTheData() throws {
        let data = try Self.parse("0c0943432d52542d4d2d424c45" + "00" + "ffffffff")
        #expect(data.name == "CC-RT-M-BLE")
        #expect(data.manufacturerData.isEmpty)
        #expect(try Self.parse("").name == nil)
    }

    @Test(arguments: [
        "05ff4c00", // claims 5 bytes, has 3
        "0c0943432d52", // truncated name
        "02", // length without a type
        "020106" + "03", // a dangling length after a good structure
        "0403" + "2cfe0f", // 16-bit list with an odd byte count
        "0605" + "2cfe0f18ff", // 32-bit list of 5 bytes
        "03012c06", // flags with 2 bytes
        "030a0102", // TX power with 2 bytes
        "02ff4c", // manufacturer data without a full company id
        "0216" + "2c", // 16-bit service data without a full UUID
        "0521" + "01020304", // 128-bit service data without a full UUID
        "0407" + "010203", // 128-bit list of 3 bytes
    ])
    func truncatedOrOverlongStructuresAreRejected(_ hex: String) {
        #expect(throws: TelemetryRejection.self) { try Self.parse(hex) }
        do { _ = try Self.parse(hex) } catch { #expect(error.code == .malformedAdvertisement) }
    }

    @Test func oversizeAdvertisementIsRejected() {
        let huge = [UInt8](repeating: 0, count: TelemetryLimits.maximumAdvertisementSize + 1)
        #expect(throws: TelemetryRejection.self) { try AdvertisingData(parsing: huge) }
    }
}
