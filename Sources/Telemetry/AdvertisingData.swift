import AccessoryKit

/// The AD structures of a raw BLE advertisement (or scan response), as Tasmota publishes it in `p`.
///
/// Format: a sequence of `length, type, data[length - 1]` structures (Bluetooth Core
/// Specification, Vol 3 Part C, 11 "Advertising and scan response data format"; AD types in the
/// Core Specification Supplement, Part A). A zero length ends the data early (padding). A structure
/// that runs past the end, or whose length does not fit its type, rejects the whole advertisement:
/// a truncated advertisement would otherwise yield a plausible but wrong partial value.
public struct AdvertisingData: Hashable, Sendable {
    /// Flags (type 0x01).
    public var flags: UInt8?
    /// Complete local name (0x09).
    public var completeName: String?
    /// Shortened local name (0x08).
    public var shortenedName: String?
    /// Service UUIDs from complete and incomplete 16-, 32- and 128-bit lists (0x02...0x07).
    public var serviceUUIDs: [BluetoothUUID] = []
    /// Service data (0x16 16-bit, 0x20 32-bit, 0x21 128-bit UUID).
    public var serviceData: [ServiceData] = []
    /// Manufacturer-specific data (0xFF).
    public var manufacturerData: [ManufacturerData] = []
    /// TX power level in dBm (0x0A).
    public var txPower: Int?

    /// The complete name, else the shortened one.
    public var name: String? { completeName ?? shortenedName }

    /// Parses the AD structures.
    /// - Throws: ``TelemetryRejection`` with code `malformedAdvertisement` for a truncated structure, a
    ///   length that does not fit its type, or data longer than ``TelemetryLimits/maximumAdvertisementSize``.
    public init(parsing data: [UInt8]) throws(TelemetryRejection) {
        guard data.count <= TelemetryLimits.maximumAdvertisementSize else {
            throw Self.malformed("advertisement of \(data.count) bytes exceeds \(TelemetryLimits.maximumAdvertisementSize)")
        }
        var index = 0
        while index < data.count {
            let length = Int(data[index])
            if length == 0 { break } // early termination; the rest is padding
            guard index + 1 + length <= data.count else {
                throw Self.malformed("AD structure at offset \(index) claims \(length) bytes, only \(data.count - index - 1) remain")
            }
            let type = data[index + 1]
            let body = data[(index + 2)..<(index + 1 + length)]
            try apply(type: type, body: body, offset: index)
            index += 1 + length
        }
    }

    private mutating func apply(type: UInt8, body: ArraySlice<UInt8>, offset: Int) throws(TelemetryRejection) {
        func require(_ condition: Bool, _ what: String) throws(TelemetryRejection) {
            guard condition else {
                throw Self.malformed("AD type 0x\(Hex.encode([type])) at offset \(offset): \(what), got \(body.count) bytes")
            }
        }
        switch type {
        case 0x01:
            try require(body.count == 1, "flags need 1 byte")
            flags = body.first
        case 0x02, 0x03:
            try require(body.count % 2 == 0, "16-bit UUID list needs a multiple of 2 bytes")
            for start in stride(from: body.startIndex, to: body.endIndex, by: 2) {
                serviceUUIDs.append(BluetoothUUID(shortValue: Self.littleEndian16(body, at: start)))
            }
        case 0x04, 0x05:
            try require(body.count % 4 == 0, "32-bit UUID list needs a multiple of 4 bytes")
            for start in stride(from: body.startIndex, to: body.endIndex, by: 4) {
                serviceUUIDs.append(BluetoothUUID(uuid32: Self.littleEndian32(body, at: start)))
            }
        case 0x06, 0x07:
            try require(body.count % 16 == 0, "128-bit UUID list needs a multiple of 16 bytes")
            for start in stride(from: body.startIndex, to: body.endIndex, by: 16) {
                serviceUUIDs.append(Self.uuid128(body[start..<(start + 16)]))
            }
        case 0x08:
            shortenedName = String(decoding: body, as: UTF8.self)
        case 0x09:
            completeName = String(decoding: body, as: UTF8.self)
        case 0x0A:
            try require(body.count == 1, "TX power needs 1 byte")
            txPower = Int(Int8(bitPattern: body.first!))
        case 0x16:
            try require(body.count >= 2, "16-bit service data needs a UUID")
            serviceData.append(
                ServiceData(uuid: BluetoothUUID(shortValue: Self.littleEndian16(body, at: body.startIndex)), data: Array(body.dropFirst(2)))
            )
        case 0x20:
            try require(body.count >= 4, "32-bit service data needs a UUID")
            serviceData.append(
                ServiceData(uuid: BluetoothUUID(uuid32: Self.littleEndian32(body, at: body.startIndex)), data: Array(body.dropFirst(4))))
        case 0x21:
            try require(body.count >= 16, "128-bit service data needs a UUID")
            serviceData.append(ServiceData(uuid: Self.uuid128(body.prefix(16)), data: Array(body.dropFirst(16))))
        case 0xFF:
            try require(body.count >= 2, "manufacturer data needs a company identifier")
            manufacturerData.append(ManufacturerData(raw: body)!)
        default:
            break // other AD types carry nothing aabridge uses
        }
    }

    private static func malformed(_ message: String) -> TelemetryRejection {
        TelemetryRejection(.malformedAdvertisement, message, field: "p")
    }

    private static func littleEndian16(_ bytes: ArraySlice<UInt8>, at start: Int) -> UInt16 {
        UInt16(bytes[start + 1]) << 8 | UInt16(bytes[start])
    }

    private static func littleEndian32(_ bytes: ArraySlice<UInt8>, at start: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[start + $1]) << (8 * $1) }
    }

    /// On air a 128-bit UUID is little-endian: reverse it to the written order.
    private static func uuid128(_ bytes: ArraySlice<UInt8>) -> BluetoothUUID {
        BluetoothUUID(bigEndianBytes: bytes.reversed())!
    }
}
