import AccessoryKit

/// The status an Apple audio accessory (AirPods, Beats) broadcasts in its proximity-pairing
/// advertisement: model, which bud is in an ear or in the case, battery levels, charging, lid.
///
/// Apple does not document this format. The layout below follows the public reverse-engineering
/// of Apple's Continuity protocol (written from memory of these sources, which could not be
/// consulted while writing; the fixture vectors confirm the parts the tests pin down):
/// - furiousMAC, "continuity" (github.com/furiousMAC/continuity: its message documentation and
///   Wireshark dissector): manufacturer data of company 0x004C is a sequence of type/length/value
///   messages; type 0x07 is "Proximity Pairing" with fields prefix (1), device model (2), status (1),
///   battery levels (1, two nibbles), charging status + case battery (1), lid open counter (1),
///   device colour (1), 0x00 (1), encrypted payload (16).
/// - OpenPods (github.com/adolfintel/OpenPods, its `PodsService`), which decodes the same bytes as
///   hex characters: status bit 0x20 tells whether the broadcasting bud is the left one ("flip"),
///   which swaps the battery nibbles, the in-ear bits 0x02/0x08 and the charging bits 0x01/0x02
///   (CAPod's `DualApplePods` swaps the in-ear bits once more when the broadcasting bud is in the
///   case, bit 0x40);
///   battery nibbles are tenths (0...10, 15 = unknown); charging-nibble bit 0x04 is the case.
/// - Hexway "apple_bleee" and the AirPodsDesktop project, which name further status bits: 0x04 both
///   buds in the case, 0x40 broadcasting bud in the case; and read lid-byte bit 0x08 as "lid
///   closed". These last bits are the least corroborated, so ``leftInCase``/``rightInCase`` and
///   ``lidOpen`` are optional and only set when those bits say something definite.
///
/// This is the status frame (prefix 0x01) only. Genuine accessories send other variants too (the
/// case's own advertisement, a short prefix-0x00 frame, prefix 0x07 on connect): they carry no
/// status, so this type does not decode them (``DecodingError/noStatus(_:)``), but they are no
/// malformation: ``ProximityPairingMessage`` names them and reads what they carry in clear, and
/// each is a sighting. A message whose bytes contradict themselves, or that only counterfeits
/// send, is refused (``Malformation``): the gateway parsers reject the advertisement, counted
/// with the reason. Batteries are laid out by model (``battery``, ``AppleModel/Batteries``).
public struct ProximityPairing: Hashable, Sendable {
    /// Why manufacturer data is not a decodable proximity-pairing message.
    public enum DecodingError: Error, Hashable, Sendable {
        /// The company identifier is not Apple's 0x004C.
        case notApple(UInt16)
        /// Apple data, but no type 0x07 message in it; carries the first message type found.
        case notProximityPairing(UInt8?)
        /// A status message (prefix 0x01) too short for the status fields, or an empty message.
        case truncated(Int)
        /// A genuine variant that carries no status: its first byte (prefix) is not 0x01
        /// (``ProximityPairingMessage`` reads what it carries). Not refused: it is a sighting.
        case noStatus(UInt8)
        /// A type 0x07 message that public decoders refuse, or whose bytes contradict
        /// themselves: refused, and counted with the reason (``Malformation``).
        case malformed(Malformation)
    }

    /// Why a proximity-pairing message is refused rather than decoded: what no genuine accessory
    /// sends. A prefix other than 0x01 is not among them: genuine accessories send such frames
    /// (``ProximityPairingMessage/Variant``), so they are sightings without a status.
    public enum Malformation: String, Error, Hashable, Sendable, CaseIterable, CustomStringConvertible {
        /// Length byte 0x13: the shorter message of counterfeit AirPods (CAPod decodes it only as
        /// "fake AirPods"; its battery and status bytes do not follow Apple's layout). No public
        /// source documents that layout, so it stays refused rather than read as Apple's.
        case counterfeit
        /// The message ends before its length byte says.
        case shorterThanLength
        /// Bytes follow the message that are no whole Continuity message: the data is longer
        /// than the length byte says.
        case longerThanLength
        /// A battery nibble of 11...14: neither tenths (0...10) nor "unknown" (15).
        case nibbleOutOfRange

        public var description: String {
            switch self {
            case .counterfeit: "length byte 0x13 (counterfeit AirPods)"
            case .shorterThanLength: "message shorter than its length byte"
            case .longerThanLength: "data longer than the message's length byte"
            case .nibbleOutOfRange: "battery nibble out of range (11...14)"
            }
        }
    }

    /// The length byte of counterfeit AirPods' messages.
    static let counterfeitLength: UInt8 = 0x13
    /// The first byte of every plaintext status message.
    static let statusPrefix: UInt8 = 0x01

    /// Apple's Bluetooth SIG company identifier.
    public static let appleCompanyIdentifier: UInt16 = 0x004C
    /// Continuity message type of proximity pairing.
    public static let messageType: UInt8 = 0x07

    /// The device model, e.g. 0x200E for AirPods Pro (little-endian on air).
    public var model: UInt16
    /// Whether the left / right bud is in an ear.
    public var leftInEar: Bool
    public var rightInEar: Bool
    /// Whether the left / right bud is in the case; `nil` when the advertisement does not tell
    /// (only "both in case" and "broadcasting bud in case" are encoded).
    public var leftInCase: Bool?
    public var rightInCase: Bool?
    /// Battery levels in whole percent, in steps of 10 (the nibble is tenths); `nil` when
    /// reported as unknown (nibble 15). These read the nibbles as earbuds'; a single-battery
    /// model's one level is ``primaryBattery`` (``battery`` picks by model).
    public var leftBattery: Int?
    public var rightBattery: Int?
    public var caseBattery: Int?
    /// The broadcasting ("primary") side's level and charging bit: the low battery nibble and
    /// charging bit 0x01, whichever side status bit 0x20 says broadcasts.
    public var primaryBattery: Int?
    public var primaryCharging: Bool
    /// Charging flags.
    public var leftCharging: Bool
    public var rightCharging: Bool
    public var caseCharging: Bool
    /// Whether the case lid is open; only known while the broadcasting bud is in the case.
    public var lidOpen: Bool?
    /// The raw lid byte (an open counter in its low bits).
    public var lidByte: UInt8
    /// The raw status byte, for diagnostics.
    public var status: UInt8
    /// The device colour code (the byte after the lid byte), when the message carries it.
    /// Meaningful only together with ``model``: the same code names different colours on
    /// different models. Following a rotation compares it (identity.md).
    public var colour: UInt8?
    /// The 16 encrypted bytes at the end of the message (after the colour and a zero byte),
    /// which the accessory's encryption key decrypts; `nil` when the message is shorter.
    public var encryptedPayload: [UInt8]?

    /// Decodes manufacturer data.
    /// - Throws: ``DecodingError`` when it is not an Apple proximity-pairing message.
    public init(manufacturerData: ManufacturerData) throws(DecodingError) {
        guard manufacturerData.companyIdentifier == Self.appleCompanyIdentifier else {
            throw .notApple(manufacturerData.companyIdentifier)
        }
        let payload = manufacturerData.payload
        let message = payload[try Self.message(in: payload)]
        // Only the status variant (prefix 0x01) carries what is read below.
        guard let prefix = message.first else { throw .truncated(0) }
        guard prefix == Self.statusPrefix else { throw .noStatus(prefix) }
        guard message.count >= 7 else { throw .truncated(message.count) }
        // Read in place, offsets from the message's start (no copy of it: this runs for every sighting).
        let start = message.startIndex
        func byte(_ offset: Int) -> UInt8 { message[start + offset] }
        model = UInt16(byte(2)) << 8 | UInt16(byte(1))
        status = byte(3)
        let battery = byte(4), charging = byte(5) >> 4, caseNibble = byte(5) & 0x0F
        lidByte = byte(6)
        colour = message.count > 7 ? byte(7) : nil
        encryptedPayload = message.count >= 25 ? Array(message[(start + 9)..<(start + 25)]) : nil

        // The broadcasting ("primary") bud's fields come first: low battery nibble, in-ear 0x02,
        // charging bit 0x01. Bit 0x20 says whether the broadcasting bud is the left one.
        let primaryIsLeft = status & 0x20 != 0
        let bothInCase = status & 0x04 != 0, primaryInCase = status & 0x40 != 0
        // A bud broadcasting from the case cannot be in an ear: its in-ear bits are swapped, 0x02
        // being the other bud's (CAPod's DualApplePods flips them again on bit 0x40, and its
        // tests of buds in the case assert it; the levels and charging bits are not swapped).
        let primaryInEar = status & (primaryInCase ? 0x08 : 0x02) != 0
        let secondaryInEar = status & (primaryInCase ? 0x02 : 0x08) != 0
        let primaryBattery = Self.level(battery & 0x0F), secondaryBattery = Self.level(battery >> 4)
        let primaryCharging = charging & 0x01 != 0, secondaryCharging = charging & 0x02 != 0
        let primaryCaseState: Bool? = bothInCase || primaryInCase ? true : (primaryInEar ? false : nil)
        let secondaryCaseState: Bool? = bothInCase ? true : (secondaryInEar ? false : nil)

        leftInEar = primaryIsLeft ? primaryInEar : secondaryInEar
        rightInEar = primaryIsLeft ? secondaryInEar : primaryInEar
        leftInCase = primaryIsLeft ? primaryCaseState : secondaryCaseState
        rightInCase = primaryIsLeft ? secondaryCaseState : primaryCaseState
        leftBattery = primaryIsLeft ? primaryBattery : secondaryBattery
        rightBattery = primaryIsLeft ? secondaryBattery : primaryBattery
        leftCharging = primaryIsLeft ? primaryCharging : secondaryCharging
        rightCharging = primaryIsLeft ? secondaryCharging : primaryCharging
        self.primaryBattery = primaryBattery
        self.primaryCharging = primaryCharging
        caseBattery = Self.level(caseNibble)
        caseCharging = charging & 0x04 != 0
        lidOpen = primaryInCase || bothInCase ? lidByte & 0x08 == 0 : nil
    }

    /// Where the proximity-pairing message's bytes (after its type and length) are in `payload`,
    /// Apple's manufacturer data after the company identifier, once they are checked: whole, no
    /// stray bytes after them, not counterfeit, and, in a status message (prefix 0x01, 7 bytes
    /// or more), battery nibbles tenths or unknown. Any other variant passes: genuine devices
    /// send them (``ProximityPairingMessage``). Building no value, it is also what the gateway
    /// parsers' refusal asks (``Advertisement/proximityPairingMalformation``).
    /// - Throws: ``DecodingError`` when there is no such message or it is refused.
    static func message(in payload: [UInt8]) throws(DecodingError) -> Range<Int> {
        // Walk the Continuity type/length/value messages; one advertisement may carry several.
        var index = 0
        var found: Range<Int>?
        while index + 1 < payload.count {
            let type = payload[index], end = index + 2 + Int(payload[index + 1])
            if type == messageType {
                guard end <= payload.count else { throw .malformed(.shorterThanLength) }
                found = (index + 2)..<end
                index = end
                break
            }
            index = end
        }
        guard let message = found else { throw .notProximityPairing(payload.first) }
        // What follows must be whole messages: anything else makes the data longer than it says.
        while index < payload.count {
            guard index + 1 < payload.count, index + 2 + Int(payload[index + 1]) <= payload.count else {
                throw .malformed(.longerThanLength)
            }
            index += 2 + Int(payload[index + 1])
        }
        guard payload[message.lowerBound - 1] != counterfeitLength else { throw .malformed(.counterfeit) }
        // Only a status message has nibbles to check: prefix, model (2), status, battery,
        // charging/case, lid are 7 bytes. Shorter, or another prefix, it is a variant without a
        // status, counted as a sighting and read by ProximityPairingMessage.
        let start = message.lowerBound
        guard message.count >= 7, payload[start] == statusPrefix else { return message }
        let battery = payload[start + 4], caseNibble = payload[start + 5] & 0x0F
        guard isLevel(battery & 0x0F), isLevel(battery >> 4), isLevel(caseNibble) else { throw .malformed(.nibbleOutOfRange) }
        return message
    }

    /// Whether a battery nibble is tenths (0...10) or "unknown" (15).
    private static func isLevel(_ nibble: UInt8) -> Bool { nibble <= 10 || nibble == 15 }

    /// A nibble of tenths; 15 means unknown / not connected (11...14 were refused).
    private static func level(_ nibble: UInt8) -> Int? {
        nibble <= 10 ? Int(nibble) * 10 : nil
    }

    /// The levels as the engine's battery, laid out as the model's ``AppleModel/batteries``
    /// say (an unknown model as earbuds), each known level with its charging flag; an unknown
    /// level (nibble 15) omits its key and its flag. `nil` when no level is known.
    public var battery: Battery? { battery(knownModel?.batteries ?? .pods) }

    /// The levels as `layout` lays them out (``battery``).
    public func battery(_ layout: AppleModel.Batteries) -> Battery? {
        let battery: Battery
        switch layout {
        case .single:
            battery = Battery(main: primaryBattery, charging: primaryBattery.map { _ in primaryCharging })
        case .pods:
            battery = Battery(
                left: leftBattery, right: rightBattery, chargingCase: caseBattery,
                leftCharging: leftBattery.map { _ in leftCharging }, rightCharging: rightBattery.map { _ in rightCharging },
                caseCharging: caseBattery.map { _ in caseCharging })
        }
        return battery.hasLevel ? battery : nil
    }

    /// The model, when ``AppleModelCatalogue`` knows it.
    public var knownModel: AppleModel? { AppleModelCatalogue.model(model) }

    /// The marketing name of the model, when known.
    public var modelName: String? { knownModel?.name }
}
