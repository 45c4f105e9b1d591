import AccessoryKit
import Configuration
import Telemetry

// The Telemetry module parses gateway payloads without knowing the domain; the engine knows
// the domain without knowing any gateway. These conversions are the one place where the two
// vocabularies meet (both modules have their own address, UUID and report types on purpose).

/// A product's placement decoder, ready for the hot path: the configured rule is turned
/// into Telemetry's `PlacementRule` once, with the product's company id or service UUID.
enum SightingDecoder: Hashable, Sendable {
    case none
    case appleProximity
    case rule(PlacementRule)

    init(_ decoder: PlacementDecoder, descriptor: DiscoveryDescriptor) {
        switch decoder {
        case .none: self = .none
        case .appleProximity: self = .appleProximity
        case .rule(let rule):
            let source: PlacementRule.Source = switch rule.source {
            case .manufacturer: .manufacturer(companyIdentifier: descriptor.bluetoothCompanyIdentifier)
            case .service: .service(descriptor.bluetoothServiceUUID.map {
                Telemetry.BluetoothUUID(high: $0.high, low: $0.low) })
            }
            self = .rule(PlacementRule(source: source, offset: rule.offset, mask: rule.mask, wornWhen: rule.wornWhen))
        }
    }
}

extension AccessoryKit.BluetoothAddress {
    init(_ address: Telemetry.BluetoothAddress) { self.init(rawValue: address.rawValue) }
}

extension Telemetry.BluetoothAddress {
    init(_ address: AccessoryKit.BluetoothAddress) { self.init(rawValue: address.rawValue) }
}

extension AccessoryKit.BluetoothUUID {
    init(_ uuid: Telemetry.BluetoothUUID) { self.init(high: uuid.high, low: uuid.low) }
}

extension AccessoryKit.Battery {
    /// Telemetry reports fractions 0...1; the contract publishes whole percent.
    init?(_ status: BatteryStatus?) {
        guard let status else { return nil }
        func percent(_ fraction: Double?) -> Int? { fraction.map { Int(($0 * 100).rounded()) } }
        self.init(main: percent(status.level), left: percent(status.left), right: percent(status.right),
                  chargingCase: percent(status.case))
        if main == nil && left == nil && right == nil && chargingCase == nil { return nil }
    }
}

extension AdvertisementSighting {
    /// The engine's view of an advertisement, decoded with the product's decoder when the
    /// address belongs to a known accessory.
    init(_ advertisement: Advertisement, identity: AccessoryKit.BluetoothAddress, decoder: SightingDecoder,
          hardware: HardwareType?) {
        // Descriptors and availability need a signal strength; a sighting without one
        // (a decoded-only message) still proves the accessory is around, at the floor.
        let rssi = advertisement.rssi ?? -127
        var serviceData: [AccessoryKit.BluetoothUUID: [UInt8]] = [:]
        for entry in advertisement.serviceData { serviceData[AccessoryKit.BluetoothUUID(entry.uuid)] = entry.data }
        var decoded: Decoded?
        switch decoder {
        case .none: break
        case .appleProximity:
            if let pairing = advertisement.appleProximityPairing {
                decoded = Decoded(worn: pairing.placement.isWorn,
                                  placement: pairing.placement == .inEar ? .inEar : .offHead,
                                  battery: Battery(pairing.battery))
            }
        case .rule(let rule):
            if let worn = rule.worn(in: advertisement) {
                decoded = Decoded(worn: worn, placement: worn ? hardware?.wornPlacement : .offHead)
            }
        }
        self.init(
            gateway: advertisement.gateway, address: identity, rssi: rssi, name: advertisement.name,
            manufacturerData: advertisement.manufacturer.map {
                AccessoryKit.ManufacturerData(companyIdentifier: $0.companyIdentifier, payload: $0.payload)
            },
            serviceData: serviceData,
            serviceUUIDs: advertisement.serviceUUIDs.map(AccessoryKit.BluetoothUUID.init),
            decoded: decoded)
    }
}

extension AccessoryKit.AccessoryReport {
    /// The engine's report for native telemetry or an `accessory/<ID>/set` payload.
    init(_ report: Telemetry.AccessoryReport) {
        var changes: [Change] = []
        if let placement = report.placement {
            if let mapped = AccessoryControlDevice.Placement(rawValue: placement.rawValue) {
                changes.append(.placement(mapped))
            } else {
                changes.append(.invalid(field: "placement", message: "unknown placement '\(placement.rawValue)'"))
            }
        }
        if let worn = report.worn {
            changes.append(.worn(worn, hardware: report.hardware.flatMap { HardwareType(rawValue: $0.rawValue) }))
        }
        if let sources = report.sources { changes.append(.sources(sources.map(AccessoryKit.BluetoothAddress.init))) }
        if let source = report.sourceConnected { changes.append(.sourceConnected(.init(source))) }
        if let source = report.sourceDisconnected { changes.append(.sourceDisconnected(.init(source))) }
        if let source = report.preferredSource { changes.append(.preferredSource(.init(source))) }
        if let rssi = report.rssi { changes.append(.rssi(rssi)) }
        if let battery = Battery(report.battery) { changes.append(.battery(battery)) }
        self.init(accessory: .init(report.accessory), gateway: report.gateway, changes: changes)
    }
}
