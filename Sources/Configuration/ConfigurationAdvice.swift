import AccessoryKit
import Storage
import Telemetry

/// Configurations that load but cannot work as the user expects (identity.md, Configuration
/// that cannot work): warnings with key paths, which `validate` prints (exit 0) and `run` logs.
/// Nothing here refuses a file; errors are ``ConfigurationDecoder``'s and the engine rules'.
enum ConfigurationAdvice {
    static func warnings(_ configuration: BridgeConfiguration, decoder: ConfigurationDecoder) -> [ConfigurationIssue] {
        var warnings: [ConfigurationIssue] = []
        let hasNativeGateway = configuration.gateways.contains { $0.format == .native }
        for (position, entry) in configuration.products.enumerated() {
            // Entries with errors were left out of `products`; the index maps back to the file.
            let index = position < decoder.productIndices.count ? decoder.productIndices[position] : position
            let path = "products[\(index)]"
            func warn(_ key: String, _ message: String) {
                let keyPath = "\(path).\(key)"
                warnings.append(
                    ConfigurationIssue(path: keyPath, message: message, origin: decoder.origins[keyPath] ?? decoder.origins[path]))
            }
            if entry.product.capabilities.contains(.placement), entry.placementDecoder == .none, !hasNativeGateway {
                warn(
                    "capabilities",
                    "declares placement, but nothing can report it (placement_decoder is none and no gateway has format native): "
                        + "its accessories would never be routed; give it a placement_decoder, add a native gateway, "
                        + "or drop placement from its capabilities")
            }
            if let matched = appleModelsMatched(by: entry.product.descriptor), matched.count < AppleModelCatalogue.models.count {
                let names = matched.prefix(3).map(\.name).joined(separator: ", ")
                warn(
                    "descriptor.bluetooth_manufacturer_data_blob",
                    "matches only \(matched.count) of the \(AppleModelCatalogue.models.count) AirPods and Beats models "
                        + "(\(names)\(matched.count > 3 ? ", ..." : "")): the picker would not offer the others; "
                        + "blob \"0719\" with mask \"ffff\" matches them all, and the model is still decoded and published")
            }
        }
        let accessoryIDs = Set(configuration.accessories.map(\.migration.id))
        for (index, source) in configuration.sources.enumerated() where accessoryIDs.contains(source.address) {
            let path = "sources[\(index)].address"
            warnings.append(
                ConfigurationIssue(
                    path: path,
                    message: "\(source.address) is configured as a source and as an accessory: an accessory is never its own source",
                    origin: decoder.origins[path]))
        }
        if configuration.storage.backend == .postgresql, let url = configuration.storage.url, PostgresConnection.hasInlinePassword(url) {
            warnings.append(
                ConfigurationIssue(
                    path: "storage.url",
                    message:
                        "carries a password; it is used, and left out of logs and bridge/info, but anyone who reads this file "
                        + "or the environment sees it: give it as storage.password_file (or AABRIDGE_STORAGE_PASSWORD) instead",
                    origin: decoder.origins["storage.url"]))
        }
        // Cluster settings without cluster mode are ignored: this bridge would run solo, and be
        // refused (exit 3) by the cluster it was meant to join.
        if !configuration.cluster.enabled {
            for key in ["instance", "partitions"] {
                let path = "cluster.\(key)"
                guard let origin = decoder.origins[path] else { continue }
                warnings.append(
                    ConfigurationIssue(
                        path: path,
                        message:
                            "is set, but cluster.enabled is not true: it is ignored and this bridge runs alone (and is refused "
                            + "by a cluster already on the database); set cluster.enabled: true, or remove it",
                        origin: origin))
            }
        }
        return warnings
    }

    /// Which catalogue models a descriptor's proximity-pairing blob lets through: `nil` when it
    /// is not an Apple proximity-pairing descriptor (no model would match, whatever its bytes).
    static func appleModelsMatched(by descriptor: DiscoveryDescriptor) -> [AppleModel]? {
        guard descriptor.bluetoothCompanyIdentifier == ProximityPairing.appleCompanyIdentifier else { return nil }
        let matched = AppleModelCatalogue.models.filter { model in
            descriptor.matches(sighting(advertising: model, blob: descriptor.bluetoothManufacturerDataBlob ?? []), immediateRSSI: -127)
        }
        return matched.isEmpty ? nil : matched
    }

    /// A proximity-pairing advertisement of `model` that agrees with `blob` everywhere but in
    /// the model bytes: what such an accessory would look like to the descriptor.
    private static func sighting(advertising model: AppleModel, blob: [UInt8]) -> AdvertisementSighting {
        var payload: [UInt8] = [ProximityPairing.messageType, 0x19, 0x01] + [UInt8](repeating: 0, count: 0x19 - 1)
        for (offset, byte) in blob.enumerated() where offset < payload.count { payload[offset] = byte }
        (payload[3], payload[4]) = model.advertisedBytes
        return AdvertisementSighting(
            gateway: "validate", accessoryID: BluetoothAddress(rawValue: 0), rssi: 0,
            manufacturerData: ManufacturerData(companyIdentifier: ProximityPairing.appleCompanyIdentifier, payload: payload))
    }
}
