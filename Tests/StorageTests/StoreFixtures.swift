import AccessoryKit
import Foundation

@testable import Storage

/// A fresh directory under the system temporary directory, removed when released.
final class TemporaryDirectory {
    let path: String

    init() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("aabridge-storage-\(UUID().uuidString)").path
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// A file path inside the directory (in a subdirectory the store must create).
    func database(_ name: String = "aabridge.sqlite3") -> String { path + "/data/" + name }
}

/// Accessories and registrations that use every field, including unset ones.
enum StoreFixtures {
    static func address(_ n: UInt64) -> BluetoothAddress { BluetoothAddress(rawValue: 0xA0B0_C0D0_0000 + n) }

    /// A descriptor with every field set (non-default range, compare and options).
    static let fullDescriptor = DiscoveryDescriptor(
        bluetoothCompanyIdentifier: 0x004C, bluetoothServiceUUID: BluetoothUUID("FE2C"),
        bluetoothNameSubstring: "Acme \"Buds\" / ü", bluetoothNameCompare: .caseInsensitive,
        bluetoothManufacturerDataBlob: [0x07, 0x10], bluetoothManufacturerDataMask: [0xFF, 0xF0],
        bluetoothServiceDataBlob: [0x00], bluetoothServiceDataMask: [],
        bluetoothRange: .immediate, ssid: "AcmeNet", ssidPrefix: "Acme-",
        supportedOptions: [.bluetoothPairingLE, .bluetoothTransportBridging, .bluetoothHID])

    /// An accessory with every optional set, a custom identifier and an awkward name.
    static let full = Accessory(
        id: address(1), displayName: "Anna's Buds 🎧 — \"pro\"\n", product: "Acme Buds", descriptor: fullDescriptor,
        state: .authorized, bluetoothIdentifier: BluetoothUUID("12345678-9ABC-DEF0-1234-56789ABCDEF0"),
        ssid: "AcmeNet-7", bluetoothTransportBridgingIdentifier: [1, 2, 3, 4, 5, 6])

    /// An accessory with every optional unset and an all-default descriptor with a 128-bit UUID.
    static let bare = Accessory(
        id: address(2), displayName: "", product: "Plain",
        descriptor: DiscoveryDescriptor(
            bluetoothServiceUUID: BluetoothUUID("0000180F-0000-1000-8000-00805F9B34FC")),
        state: .awaitingAuthorization)

    static let unauthorized = Accessory(
        id: address(3), displayName: "Old", product: "Plain", descriptor: DiscoveryDescriptor(ssid: "Wifi"),
        state: .unauthorized, bluetoothTransportBridgingIdentifier: [])

    static let fullRegistration = Registration(
        configuration: .init(
            devicePlacement: .overTheEar, deviceCapabilities: [.audioSwitching, .placement],
            primaryAudioSourceDeviceIdentifier: address(0x100), secondaryAudioSourceDeviceIdentifier: address(0x101)))

    static let bareRegistration = Registration(configuration: .init(deviceCapabilities: []), isInvalidated: true)

    static let primaryOnly = Registration(
        configuration: .init(
            devicePlacement: .offHead, deviceCapabilities: [.audioSwitching],
            primaryAudioSourceDeviceIdentifier: BluetoothAddress(rawValue: 0xFFFF_FFFF_FFFF)))

    /// An accessory for bulk tests.
    static func accessory(_ n: UInt64) -> Accessory {
        Accessory(
            id: address(n), displayName: "Accessory \(n)", product: "Acme Buds",
            descriptor: DiscoveryDescriptor(bluetoothCompanyIdentifier: 0x004C), state: .authorized)
    }

    static func registration(_ n: UInt64) -> Registration {
        Registration(
            configuration: .init(
                devicePlacement: .inEar, deviceCapabilities: [.audioSwitching, .placement],
                primaryAudioSourceDeviceIdentifier: address(0x1_0000 + n)))
    }

    /// The state the writes of `everything` produce.
    static let everything: [StorageWrite] = [
        .upsertAccessory(full), .upsertAccessory(bare), .upsertAccessory(unauthorized),
        .upsertRegistration(full.id, fullRegistration), .upsertRegistration(bare.id, bareRegistration),
        .upsertRegistration(unauthorized.id, primaryOnly), .migrationComplete,
    ]

    static let everythingState = RestoredState(
        accessories: [full, bare, unauthorized],
        registrations: [full.id: fullRegistration, bare.id: bareRegistration, unauthorized.id: primaryOnly],
        migrationComplete: true)
}
