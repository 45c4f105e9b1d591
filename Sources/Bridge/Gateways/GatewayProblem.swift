import AccessoryKit

/// Something a heard gateway cannot do that makes the bridge useless through it, as
/// household.md ("What gateways and advertisements really say") names them: shown under the
/// gateway on `bridge/gateways`, logged once when it appears, and Home Assistant's per-node
/// sensor state.
enum GatewayProblem: String, Hashable, Sendable, CaseIterable {
    /// At least ``minimumAdvertisements`` advertisements in the last minute, none with
    /// manufacturer data: an OpenMQTTGateway (or Theengs) without `pubadvdata`, so no
    /// accessory is ever a candidate and no placement is ever known.
    case noManufacturerData = "no_manufacturer_data"
    /// An ESPresense node while a paired Apple accessory has no IRK: ESPresense never forwards
    /// Apple proximity frames and reports an Apple accessory only by its IRK (`known_irks`).
    case espresenseNeedsIRK = "espresense_needs_irk"

    static let minimumAdvertisements = 50

    /// The problem's message; `needingIRK` names the Apple accessories without an IRK.
    func message(needingIRK: [String] = []) -> String {
        switch self {
        case .noManufacturerData:
            "OpenMQTTGateway publishes no manufacturer data: set pubadvdata (docs/operations.md, \"Gateway firmware\")"
        case .espresenseNeedsIRK:
            "ESPresense never forwards Apple proximity frames and reports an Apple accessory only by its IRK: add the IRK of "
                + (needingIRK.isEmpty ? "each Apple accessory" : needingIRK.joined(separator: ", "))
                + " to known_irks, and give it to aabridge (\(RequestName.keys.name))"
        }
    }
}
