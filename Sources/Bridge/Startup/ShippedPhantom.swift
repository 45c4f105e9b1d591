import AccessoryKit
import Configuration

/// The made-up accessory that config/aabridge.yaml shipped in its `accessories:` section in
/// 0.1.0 ("Alice's AirPods", `A1:B2:C3:D4:E5:F6`; CHANGELOG.md): every database started with
/// that file migrated it, and it stayed a device in Home Assistant after the line left the file
/// (a migration runs once, and removing an accessory is the user's request, never the file's).
///
/// At activation the runtime removes it, through the same path as `accessory/remove` (storage,
/// retained state, Home Assistant discovery), but only while it is exactly what the file
/// planted and the configuration no longer names it. Anything a person did to it (a new name,
/// a key, a source set, a connection reported, an address followed) makes it theirs, and it
/// stays; nothing else is ever removed. Once removed it cannot come back: the migration has
/// run, and no gateway hears a made-up address to pair it from the picker.
enum ShippedPhantom {
    static let id = BluetoothAddress("A1:B2:C3:D4:E5:F6")!
    static let name = "Alice's AirPods"
    static let product = "AirPods or Beats"

    /// The phantom's id when `engine` (activated) holds it untouched and `configuration` does
    /// not list it; nil otherwise.
    static func find(in engine: BridgeEngine, configuration: BridgeConfiguration) -> BluetoothAddress? {
        // Only a database that ran a migration can hold it; a configuration that still
        // migrates it (the demo's, an old copy of the file) keeps it.
        guard engine.migrationComplete, !configuration.accessories.contains(where: { $0.migration.id == id }),
            let status = engine.status(of: id)
        else { return nil }
        let accessory = status.accessory
        guard accessory.displayName == name, accessory.product == product, accessory.state == .authorized,
            accessory.ssid == nil, accessory.bluetoothTransportBridgingIdentifier == nil
        else { return nil }
        let sourceSet =
            status.registration.map {
                $0.configuration.primaryAudioSourceDeviceIdentifier != nil || $0.configuration.secondaryAudioSourceDeviceIdentifier != nil
            } ?? false
        guard !sourceSet, status.sources.isEmpty, engine.keys[id] == nil, engine.followedAddresses[id] == nil else { return nil }
        return id
    }
}
