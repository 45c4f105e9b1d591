import AccessoryKit
import Bridge
import JSON

@testable import HomeAssistant

/// Products, accessories and statuses for the Home Assistant discovery tests.
enum HomeAssistantFixtures {
    static let buds = Product(
        name: "AirPods Pro", hardware: .inEarBud, capabilities: [.audioSwitching, .placement],
        descriptor: DiscoveryDescriptor(bluetoothCompanyIdentifier: 0x004C))
    /// No company identifier: no manufacturer can be named.
    static let studio = Product(
        name: "Acme Studio", hardware: .overEarHeadphone, capabilities: [.audioSwitching, .placement],
        descriptor: DiscoveryDescriptor(bluetoothServiceUUID: BluetoothUUID("FE2C")!))
    /// Audio switching only (no wear sensor).
    static let basic = Product(
        name: "Basic", hardware: .onEarHeadphone, capabilities: [.audioSwitching],
        descriptor: DiscoveryDescriptor(bluetoothCompanyIdentifier: 0x0A12))

    /// With two configured sources, named options of the "Home source" select.
    static let discovery = HomeAssistantDiscovery(
        baseTopic: "aabridge", products: [buds, studio, basic],
        sources: [.init(address: phone, name: "Alice's iPhone"), .init(address: tv, name: "Living room TV")],
        version: BridgeModule.version)

    static let budsID = BluetoothAddress("A1:B2:C3:D4:E5:F6")!
    static let studioID = BluetoothAddress("A1:B2:C3:D4:E5:07")!
    static let basicID = BluetoothAddress("A1:B2:C3:D4:E5:08")!
    static let phone = BluetoothAddress("11:22:33:44:55:66")!
    static let tv = BluetoothAddress("11:22:33:44:55:88")!

    static func accessory(_ id: BluetoothAddress, name: String, product: Product) -> Accessory {
        Accessory(id: id, displayName: name, product: product.name, descriptor: product.descriptor, state: .authorized)
    }

    /// Registered with both capabilities, worn, two sources, every battery part.
    static let fullStatus = AccessoryStatus(
        accessory: accessory(budsID, name: "Alice's AirPods", product: buds),
        registration: Registration(
            configuration: .init(
                devicePlacement: .inEar, deviceCapabilities: [.audioSwitching, .placement],
                primaryAudioSourceDeviceIdentifier: phone, secondaryAudioSourceDeviceIdentifier: tv)),
        worn: true, sources: [phone, tv], routes: [phone], available: true, rssi: -61, gateway: "kitchen",
        battery: Battery(left: 80, right: 75, chargingCase: 40, leftCharging: true, rightCharging: false),
        lastSeen: Timestamp(milliseconds: 1_780_000_000_000),
        heardFrom: BluetoothAddress(rawValue: 0x4A12_3456_789A), identity: .irk, keys: KeyPresence(irk: true, encryptionKey: false),
        model: "AirPods Pro (2nd generation)", room: "kitchen", homeSources: [phone], alias: BluetoothAddress("A1:B2:C3:D4:E5:AA")!)

    /// Registered for placement, never worn or placed yet, no battery, invalidated with an error.
    static let bareStatus = AccessoryStatus(
        accessory: accessory(studioID, name: "Studio", product: studio),
        registration: Registration(configuration: .init(devicePlacement: nil, deviceCapabilities: [.placement]), isInvalidated: true),
        lastError: AccessoryControlDevice.Error(.invalidated, operation: .update, message: "registration invalidated"))

    /// Audio switching only: no placement capability.
    static let switchingOnlyStatus = AccessoryStatus(
        accessory: accessory(basicID, name: "Office headset", product: basic),
        registration: Registration(configuration: .init(deviceCapabilities: [.audioSwitching], primaryAudioSourceDeviceIdentifier: phone)),
        available: true, rssi: -70, gateway: "office", battery: Battery(main: 55, charging: true),
        // A home source nobody named: the Home source select offers it by address.
        homeSources: [BluetoothAddress("22:33:44:55:66:77")!])

    /// Paired, not registered: the product's capabilities decide the components.
    static let unregisteredStatus = AccessoryStatus(
        accessory: accessory(BluetoothAddress("A1:B2:C3:D4:E5:09")!, name: "New buds", product: buds))

    static let allStatuses = [fullStatus, bareStatus, switchingOnlyStatus, unregisteredStatus]

    /// The component ids of a discovery payload, in order.
    static func componentIDs(_ payload: JSONValue) -> [String] {
        guard case .object(let pairs)? = payload["components"] else { return [] }
        return pairs.map(\.0)
    }

    /// The unique ids of a discovery payload, in order.
    static func uniqueIDs(_ payload: JSONValue) -> [String] {
        guard case .object(let pairs)? = payload["components"] else { return [] }
        return pairs.compactMap { $0.1["unique_id"]?.stringValue }
    }

    /// Every topic a payload names (state, command, attributes, availability).
    static func topics(in value: JSONValue) -> [String] {
        switch value {
        case .object(let pairs):
            return pairs.flatMap { key, value in
                (key.hasSuffix("topic") ? [value.stringValue].compactMap { $0 } : []) + topics(in: value)
            }
        case .array(let values): return values.flatMap(topics(in:))
        default: return []
        }
    }
}
