import Testing

@testable import AccessoryKit

@Suite("Matching advertisements against descriptors")
struct DescriptorMatchingTests {
    typealias D = DiscoveryDescriptor
    static let id = Fixtures.address(1)

    static func ad(
        rssi: Int = -60, name: String? = nil, manufacturer: [UInt8]? = nil, serviceData: [BluetoothUUID: [UInt8]] = [:],
        services: [BluetoothUUID] = []
    ) -> AdvertisementSighting {
        AdvertisementSighting(
            gateway: "gw", accessoryID: id, rssi: rssi, name: name,
            manufacturerData: manufacturer.flatMap { ManufacturerData(raw: $0) },
            serviceData: serviceData, serviceUUIDs: services)
    }

    static let cases: [(String, D, AdvertisementSighting, Bool)] = [
        ("company little-endian matches", D(bluetoothCompanyIdentifier: 0x004C), ad(manufacturer: [0x4C, 0x00]), true),
        ("company byte order matters", D(bluetoothCompanyIdentifier: 0x004C), ad(manufacturer: [0x00, 0x4C]), false),
        ("company needs manufacturer data", D(bluetoothCompanyIdentifier: 0x004C), ad(), false),
        (
            "manufacturer mask matches after company",
            D(
                bluetoothCompanyIdentifier: 0x004C, bluetoothManufacturerDataBlob: [0x07, 0x10],
                bluetoothManufacturerDataMask: [0xFF, 0xF0]), ad(manufacturer: [0x4C, 0x00, 0x07, 0x1E, 0x99]), true
        ),
        (
            "manufacturer mask mismatch",
            D(
                bluetoothCompanyIdentifier: 0x004C, bluetoothManufacturerDataBlob: [0x07, 0x10],
                bluetoothManufacturerDataMask: [0xFF, 0xF0]), ad(manufacturer: [0x4C, 0x00, 0x07, 0x2E]), false
        ),
        (
            "manufacturer payload too short",
            D(
                bluetoothCompanyIdentifier: 0x004C, bluetoothManufacturerDataBlob: [0x07, 0x10],
                bluetoothManufacturerDataMask: [0xFF, 0x00]), ad(manufacturer: [0x4C, 0x00, 0x07]), false
        ),
        (
            "service in UUID list", D(bluetoothServiceUUID: Fixtures.fe2c),
            ad(services: [BluetoothUUID("0000FE2C-0000-1000-8000-00805F9B34FB")!]), true
        ),
        ("service in service data", D(bluetoothServiceUUID: Fixtures.fe2c), ad(serviceData: [Fixtures.fe2c: [1]]), true),
        ("service absent", D(bluetoothServiceUUID: Fixtures.fe2c), ad(services: [BluetoothUUID("180F")!]), false),
        (
            "service data mask",
            D(bluetoothServiceUUID: Fixtures.fe2c, bluetoothServiceDataBlob: [0x01, 0x00], bluetoothServiceDataMask: [0x0F, 0x00]),
            ad(serviceData: [Fixtures.fe2c: [0xF1, 0x55]]), true
        ),
        (
            "service data mask mismatch",
            D(bluetoothServiceUUID: Fixtures.fe2c, bluetoothServiceDataBlob: [0x01], bluetoothServiceDataMask: [0x0F]),
            ad(serviceData: [Fixtures.fe2c: [0xF2]]), false
        ),
        (
            "service data needed for mask",
            D(bluetoothServiceUUID: Fixtures.fe2c, bluetoothServiceDataBlob: [0x01], bluetoothServiceDataMask: [0x0F]),
            ad(services: [Fixtures.fe2c]), false
        ),
        (
            "service data too short",
            D(bluetoothServiceUUID: Fixtures.fe2c, bluetoothServiceDataBlob: [0x01, 0x02], bluetoothServiceDataMask: [0x0F, 0x0F]),
            ad(serviceData: [Fixtures.fe2c: [0x01]]), false
        ),
        (
            "name literal", D(bluetoothServiceUUID: Fixtures.fe2c, bluetoothNameSubstring: "Acme"),
            ad(name: "My Acme 7", services: [Fixtures.fe2c]), true
        ),
        (
            "name literal is case-sensitive", D(bluetoothServiceUUID: Fixtures.fe2c, bluetoothNameSubstring: "Acme"),
            ad(name: "my acme 7", services: [Fixtures.fe2c]), false
        ),
        (
            "name case-insensitive",
            D(bluetoothServiceUUID: Fixtures.fe2c, bluetoothNameSubstring: "Acme", bluetoothNameCompare: .caseInsensitive),
            ad(name: "my ACME 7", services: [Fixtures.fe2c]), true
        ),
        ("name missing", D(bluetoothServiceUUID: Fixtures.fe2c, bluetoothNameSubstring: "Acme"), ad(services: [Fixtures.fe2c]), false),
        (
            "all rules must hold", D(bluetoothCompanyIdentifier: 0x004C, bluetoothServiceUUID: Fixtures.fe2c),
            ad(manufacturer: [0x4C, 0x00]), false
        ),
        (
            "immediate range at threshold", D(bluetoothCompanyIdentifier: 0x004C, bluetoothRange: .immediate),
            ad(rssi: -50, manufacturer: [0x4C, 0x00]), true
        ),
        (
            "immediate range below threshold", D(bluetoothCompanyIdentifier: 0x004C, bluetoothRange: .immediate),
            ad(rssi: -51, manufacturer: [0x4C, 0x00]), false
        ),
        ("wifi descriptor never matches an advertisement", D(ssid: "Acme"), ad(name: "Acme", manufacturer: [0x4C, 0x00]), false),
    ]

    @Test("matching rules", arguments: cases.indices)
    func matching(row: Int) {
        let (name, descriptor, sighting, expected) = Self.cases[row]
        #expect(descriptor.matches(sighting, immediateRSSI: -50) == expected, "\(name)")
    }
}
