import AccessoryKit

/// One Apple or Beats audio accessory model as its proximity-pairing advertisement names it:
/// what to call it, what kind of hardware it is (which decides what "worn" means), how its
/// advertisement says it is worn, and what public decoders found unreliable about it.
/// ``AppleModelCatalogue`` lists the known ones, with the sources.
public struct AppleModel: Hashable, Sendable {
    /// How the status byte of this model's advertisement says it is worn.
    public enum WearSensor: Hashable, Sendable {
        /// Earbuds, and headphones with a sensor per earcup: worn while bit 0x02 (the
        /// broadcasting bud or cup) or bit 0x08 (the other one) is set.
        case inEarBits
        /// AirPods Max (first generation, Lightning and USB-C): worn while bit 0x20 is set; the
        /// earbuds' bits 0x02/0x08 do not follow the head.
        case statusBit5
        /// No wear sensor: the advertisement says nothing about placement, so it gives none
        /// (the accessory is routed while available only when registered without `placement`).
        case none
    }

    /// Which batteries the model has, so which parts its advertisement's nibbles are.
    public enum Batteries: String, Hashable, Sendable {
        /// Two buds and a case: `left`, `right`, `case`, each with its charging flag.
        case pods
        /// One battery (headphones, neckband and wired-together earphones): `main` and
        /// `charging`, read from the broadcasting ("primary") side's nibble and charging bit,
        /// whichever side status bit 0x20 says that is; never left, right or case (household.md).
        case single
    }

    /// How sure the sources are about a quirk.
    public enum Confidence: String, Hashable, Sendable {
        /// Stated by the decoder's code and tests, or by Apple.
        case high
        /// Reported by users in a decoder's issues and handled there, not confirmed otherwise.
        case medium
        /// One report, or inferred.
        case low
    }

    /// Something a public decoder found about this model that a user should know.
    public struct Quirk: Hashable, Sendable {
        public var note: String
        public var confidence: Confidence
        /// Where it was found (a project and its issue or file).
        public var source: String

        /// Creates a quirk.
        public init(_ note: String, confidence: Confidence, source: String) {
            self.note = note
            self.confidence = confidence
            self.source = source
        }
    }

    /// The model identifier, as ``ProximityPairing/model`` reads it (0x200E: AirPods Pro).
    public var id: UInt16
    /// The marketing name, published as the accessory's `model`.
    public var name: String
    /// Earbuds, on-ear or over-ear headphones.
    public var hardware: HardwareType
    public var wearSensor: WearSensor
    public var batteries: Batteries
    public var quirks: [Quirk]
    /// What the model's hardware adds to AudioAccessoryKit's capabilities beyond switching and
    /// placement: `headTracking` and `audioSpatialization` for the models Apple lists with
    /// spatial audio with dynamic head tracking, else none (domain.md, iOS 27).
    public var spatialCapabilities: AccessoryControlDevice.Capabilities

    /// Creates a model.
    public init(
        _ id: UInt16, _ name: String, _ hardware: HardwareType, wear: WearSensor = .inEarBits, batteries: Batteries = .pods,
        spatial: AccessoryControlDevice.Capabilities = [], quirks: [Quirk] = []
    ) {
        self.spatialCapabilities = spatial
        self.id = id
        self.name = name
        self.hardware = hardware
        self.wearSensor = wear
        self.batteries = batteries
        self.quirks = quirks
    }

    /// Whether the advertisement says the accessory is worn; `nil` for a model without a wear sensor.
    public func worn(_ pairing: ProximityPairing) -> Bool? {
        switch wearSensor {
        case .inEarBits: pairing.leftInEar || pairing.rightInEar
        case .statusBit5: pairing.status & 0x20 != 0
        case .none: nil
        }
    }

    /// The placement the advertisement gives: worn becomes the hardware type's placement
    /// (`inEar`, `onHead`, `overTheEar`), not worn `offHead`; `nil` without a wear sensor.
    public func placement(_ pairing: ProximityPairing) -> AccessoryControlDevice.Placement? {
        worn(pairing).map { hardware.placement(worn: $0) }
    }

    /// The two model bytes as they stand in the advertisement (low byte first, after the
    /// message type, length and prefix): what a descriptor's blob would have to match.
    public var advertisedBytes: (UInt8, UInt8) { (UInt8(id & 0xFF), UInt8(id >> 8)) }
}
