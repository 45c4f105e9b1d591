import AccessoryKit

@testable import Telemetry

/// Why the bridge says otherwise than a peer's test about a frame, where it does on purpose or
/// where the peer is known to be wrong: each is listed, with its count, in docs/telemetry.md
/// ("Peer corpus"). A disagreement none of these explains fails the corpus test.
enum PeerDisagreement: String, CaseIterable, Sendable {
    /// Length byte 0x13 (counterfeit AirPods): the peer decodes its bytes as if they were
    /// Apple's layout; the bridge refuses the frame (the rule) and publishes nothing.
    case counterfeitRefused
    /// A single-battery model (here AirPods Max) read as two buds and a case by the peer
    /// (TheengsDecoder); the bridge publishes `main` only.
    case singleBatteryAsPods
    /// Nibble 15 ("unknown" for every other decoder and for the bridge) read as 100 %
    /// (TheengsDecoder's lookup); the bridge omits the key.
    case unknownAsFull
    /// The battery nibbles read without the flip of status bit 0x20 (TheengsDecoder: low nibble
    /// always left); the bridge, with CAPod and OpenPods, swaps them when the right bud broadcasts.
    case noFlip
    /// A charging flag for a part whose level is unknown (nibble 15): the peer defaults it to a
    /// value; the bridge says nothing about a battery it does not know (no level, no flag).
    case chargingOfUnknownLevel
    /// A genuine frame without status (CAPod #603: prefix 0x07, sent by AirPods 4 on connect):
    /// the peer drops it; the bridge counts it as a sighting (issue 48) and reads no status.
    case statuslessCounted

    static func reason(frame: PeerFrame, key: String, theirs: PeerFrame.Value, ours: [String: PeerFrame.Value]) -> PeerDisagreement? {
        if case .text(let reason)? = ours["reason"], reason.contains("counterfeit"), key != "model" { return .counterfeitRefused }
        if case .text(let reason)? = ours["reason"], reason.hasPrefix("noStatus"), key == "refused" { return .statuslessCounted }
        let bytes = Hex.decode(frame.frame) ?? []
        let model = bytes.count > 4 ? AppleModelCatalogue.model(UInt16(bytes[4]) << 8 | UInt16(bytes[3])) : nil
        if model?.batteries == .single, ["left", "right", "case", "left_charging", "right_charging", "case_charging"].contains(key) {
            return .singleBatteryAsPods
        }
        if frame.peer == "TheengsDecoder", bytes.count > 7, case .number(let percent) = theirs {
            // TheengsDecoder reads the low battery nibble as left, the high one as right.
            let nibble: UInt8? =
                switch key {
                case "left": bytes[6] & 0x0F
                case "right": bytes[6] >> 4
                case "case": bytes[7] & 0x0F
                default: nil
                }
            if percent == 100, nibble == 15 { return .unknownAsFull }
            if let nibble, Int(nibble) * 10 == percent { return .noFlip }
        }
        if key.hasSuffix("charging"), ours[key] == PeerFrame.Value.none {
            let level = key == "charging" ? "main" : String(key.dropLast("_charging".count))
            if ours[level] == PeerFrame.Value.none { return .chargingOfUnknownLevel }
        }
        return nil
    }
}
