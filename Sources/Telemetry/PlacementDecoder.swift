import AccessoryKit

/// How a product's placement is read from its advertisements (`placement_decoder` in
/// configuration.md). The configuration builds it once per product, with the product's company
/// identifier or service UUID already filled in, and the runtime decodes every sighting with it.
public enum PlacementDecoder: Hashable, Sendable {
    /// A generic byte rule: the accessory is worn when `(byte[offset] & mask) == wornWhen` in its
    /// manufacturer or service data.
    public struct Rule: Hashable, Sendable {
        /// Where the byte is read.
        public enum Source: Hashable, Sendable {
            /// Manufacturer data of the company (any company when `nil`); `offset` counts from the
            /// first byte *after* the company identifier, as AccessorySetupKit's manufacturer data
            /// blob does.
            case manufacturer(companyIdentifier: UInt16?)
            /// Service data of the given service, or of the first service when `nil`; `offset`
            /// counts from the first byte after the UUID.
            case service(BluetoothUUID?)

            /// The configuration spelling (`source:`).
            public var name: String {
                switch self {
                case .manufacturer: "manufacturer"
                case .service: "service"
                }
            }
        }

        public var source: Source
        /// The byte's index in the source bytes.
        public var offset: Int
        public var mask: UInt8
        public var wornWhen: UInt8

        /// Creates a rule.
        public init(source: Source, offset: Int, mask: UInt8, wornWhen: UInt8) {
            self.source = source
            self.offset = offset
            self.mask = mask
            self.wornWhen = wornWhen
        }

        /// Whether the advertisement says worn; `nil` when it lacks the data or the byte.
        public func worn(in advertisement: Advertisement) -> Bool? {
            let data: [UInt8]?
            switch source {
            case .manufacturer(let company):
                data = advertisement.manufacturerData.first { company == nil || $0.companyIdentifier == company }?.payload
            case .service(let uuid):
                data = uuid.map { advertisement.serviceData(for: $0) } ?? advertisement.serviceData.first?.data
            }
            guard let data, offset >= 0, offset < data.count else { return nil }
            return data[offset] & mask == wornWhen
        }
    }

    /// Placement comes only from telemetry that states it (or a wear sensor).
    case none
    /// Apple proximity-pairing advertisements (manufacturer data `4c00 07 ...`).
    case appleProximity
    case rule(Rule)

    /// The configuration spelling, for `bridge/info`.
    public var name: String {
        switch self {
        case .none: "none"
        case .appleProximity: "apple_proximity"
        case .rule: "rule"
        }
    }

    /// What the advertisement says about placement and battery, for the engine; `nil` when the
    /// decoder is `none` or the advertisement does not carry what it reads.
    /// - Parameter hardware: the product's hardware type, which decides what a rule's "worn" means;
    ///   without one a worn reading carries no placement and the engine maps it by the
    ///   accessory's own hardware type.
    public func decode(_ advertisement: Advertisement, hardware: HardwareType?) -> AdvertisementSighting.Decoded? {
        switch self {
        case .none:
            return nil
        case .appleProximity:
            guard let pairing = advertisement.appleProximityPairing else {
                // A variant without status (docs/telemetry.md) still names a known model when it
                // carries one in clear: the model alone, no placement, battery or wear.
                return advertisement.proximityPairingMessage?.knownModel.map { AdvertisementSighting.Decoded(model: $0.name) }
            }
            // A known model's own hardware type decides what worn means (AirPods Max are over
            // the ear whatever the product says), and its own bits say worn; a model without a
            // wear sensor gives battery and model only.
            if let model = pairing.knownModel {
                let placement = model.placement(pairing)
                return AdvertisementSighting.Decoded(
                    worn: placement?.isWorn, placement: placement, battery: pairing.battery(model.batteries), model: model.name,
                    wearSensor: model.wearSensor != .none)
            }
            var decoded = Self.reading(worn: pairing.leftInEar || pairing.rightInEar, hardware: hardware)
            decoded.battery = pairing.battery(.pods)
            return decoded
        case .rule(let rule):
            return rule.worn(in: advertisement).map { Self.reading(worn: $0, hardware: hardware) }
        }
    }

    /// A wear reading without a model to interpret it: the product's hardware type decides;
    /// without one only "not worn" is a placement, and the engine maps "worn" by the
    /// accessory's own hardware type.
    private static func reading(worn: Bool, hardware: HardwareType?) -> AdvertisementSighting.Decoded {
        AdvertisementSighting.Decoded(worn: worn, placement: hardware?.placement(worn: worn) ?? (worn ? nil : .offHead))
    }
}
