import AccessoryKit

/// A proximity-pairing message (Apple's Continuity type 0x07) of any variant a genuine accessory
/// sends, with what it carries in clear: every one of them is a sighting of its accessory
/// (household.md: "Every advertisement a genuine accessory sends is a sighting of it").
///
/// ``ProximityPairing`` decodes the status variant; the others carry no status, and the bridge
/// reads from them only what is in clear:
///
/// | variant | first byte | who sends it | read in clear |
/// |---|---|---|---|
/// | ``Variant/status`` | 0x01 | every AirPods and Beats model, the frame all decoders read | model, status, levels, lid, colour (``ProximityPairing``) |
/// | ``Variant/connected`` | 0x00 | AirPods 2 while connected to a phone (the short `07 0f 00 ...` frame); LibrePods' protocol notes call prefix 0x00 "pairing mode" | the model, bytes 1-2 as in the status frame |
/// | ``Variant/onConnect`` | 0x07 | AirPods 4 from their identity address on connect (CAPod issue #603, its `AirPodsGen4Test`: "model bytes match but battery/color bytes are not plaintext") | the model, bytes 1-2 |
/// | ``Variant/chargingCase`` | 0x06, then exactly 16 bytes | the AirPods Pro 3 case on its own (`07 11 06` + 16 encrypted bytes) | nothing: no model, colour or battery in clear |
/// | ``Variant/unread`` | anything else, or too short for its variant | not known from a public source | nothing |
///
/// Where these variants come from: the status layout is cited in ``ProximityPairing``; the
/// prefix-0x07 frame is a capture from CAPod's issue #603; the case's frame and the prefix-0x00
/// frame are described in aabridge's issue 48 from captures its reporter did not publish, and no
/// public capture of either was found (docs/telemetry.md, "Real captures"). So what they carry
/// is read conservatively: the model only where the frame's own source says it is there, and
/// nothing from the case's 16 bytes, whose plaintext layout nobody has published.
///
/// Nothing here refuses a message: what no device sends is refused before, by
/// ``ProximityPairing/message(in:)`` (``ProximityPairing/Malformation``).
public struct ProximityPairingMessage: Hashable, Sendable {
    /// Which variant the message is, by its first byte (and, for the case, its length).
    public enum Variant: String, Hashable, Sendable, CaseIterable {
        case status, connected, onConnect, chargingCase, unread
    }

    /// The first byte of the case's own message (AirPods Pro 3).
    static let chargingCasePrefix: UInt8 = 0x06
    /// The first byte of the short frame sent while connected.
    static let connectedPrefix: UInt8 = 0x00
    /// The first byte of the frame sent from the identity address on connect.
    static let onConnectPrefix: UInt8 = 0x07
    /// The case's message: its prefix, then one encrypted AES block.
    static let chargingCaseLength = 17

    /// Which variant this is.
    public var variant: Variant
    /// The model as the message carries it in clear (little-endian on air, e.g. 0x2014); `nil`
    /// when the variant carries none.
    public var model: UInt16?
    /// The status, for the status variant only.
    public var status: ProximityPairing?
    /// The 16 encrypted bytes of the case's own message (``Variant/chargingCase``). Nobody has
    /// published what they hold once decrypted, so nothing reads them yet (docs/identity.md).
    public var chargingCasePayload: [UInt8]?

    /// Reads the proximity-pairing message of Apple manufacturer data, whichever variant.
    /// - Throws: ``ProximityPairing/DecodingError`` when there is none, or it is refused
    ///   (``ProximityPairing/DecodingError/malformed(_:)``); never for a variant without status.
    public init(manufacturerData: ManufacturerData) throws(ProximityPairing.DecodingError) {
        guard manufacturerData.companyIdentifier == ProximityPairing.appleCompanyIdentifier else {
            throw .notApple(manufacturerData.companyIdentifier)
        }
        let payload = manufacturerData.payload
        let message = payload[try ProximityPairing.message(in: payload)]
        let start = message.startIndex
        // The model where the variant's own source says it is: bytes 1-2, little-endian.
        let clearModel = message.count >= 3 ? UInt16(message[start + 2]) << 8 | UInt16(message[start + 1]) : nil
        model = nil
        status = nil
        chargingCasePayload = nil
        switch message.first {
        case ProximityPairing.statusPrefix? where message.count >= 7:
            let pairing = try ProximityPairing(manufacturerData: manufacturerData)
            variant = .status
            status = pairing
            model = pairing.model
        case Self.connectedPrefix? where clearModel != nil:
            variant = .connected
            model = clearModel
        case Self.onConnectPrefix? where clearModel != nil:
            variant = .onConnect
            model = clearModel
        case Self.chargingCasePrefix? where message.count == Self.chargingCaseLength:
            variant = .chargingCase
            chargingCasePayload = Array(message.dropFirst())
        default:
            variant = .unread
        }
    }

    /// The model, when the message carries one in clear and ``AppleModelCatalogue`` knows it.
    public var knownModel: AppleModel? { model.flatMap(AppleModelCatalogue.model) }
}
