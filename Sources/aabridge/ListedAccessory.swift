import AccessoryKit
import JSON
import Telemetry

/// An accessory as the running bridge lists it in its retained `bridge/accessories`
/// (mqtt-api.md), as far as the commands that read it (`keys`, `report-sources`) need it.
/// The one reading of that payload for every command.
struct ListedAccessory: Hashable, Sendable {
    var id: BluetoothAddress
    var name: String
    /// Whether the bridge has its IRK (`keys.irk`).
    var hasIRK: Bool
    /// Its public address (`accessory/alias`): BlueZ and the desktop know an accessory paired
    /// from a rotating address by this one.
    var alias: BluetoothAddress?
    /// Registered with `audioSwitching` and not invalidated: the bridge takes source updates.
    var takesSources: Bool
    /// Heard by a gateway lately (`available`).
    var available: Bool
    var primarySource: BluetoothAddress?
    var secondarySource: BluetoothAddress?

    /// How a command's line names it: `F0:99:B6:12:34:56 "Alice’s AirPods"`.
    /// The name comes from the bridge, over MQTT: sanitised like a BlueZ name (TerminalText).
    var label: String { "\(id) \"\(TerminalText.sanitised(name))\"" }

    /// The accessory as ``SourceReporter`` follows it.
    var reported: SourceReporter.Accessory {
        SourceReporter.Accessory(
            id: id, name: name, takesSources: takesSources, available: available, primarySource: primarySource,
            secondarySource: secondarySource, alias: alias)
    }

    /// The accessories of a `bridge/accessories` payload, or nil when it is not a JSON array
    /// (not aabridge's). Entries without a valid `id` are left out.
    static func list(_ payload: [UInt8]) -> [ListedAccessory]? {
        // The bridge's list of 10,000 accessories is larger than a request may be.
        guard let value = try? JSONParser.parse(payload, maximumSize: max(JSONParser.maximumSize, payload.count)),
            let array = value.arrayValue
        else { return nil }
        return array.compactMap { object in
            guard let id = object["id"]?.stringValue.flatMap({ BluetoothAddress($0) }) else { return nil }
            let capabilities = object["capabilities"]?.arrayValue?.compactMap(\.stringValue) ?? []
            return ListedAccessory(
                id: id, name: object["name"]?.stringValue ?? "", hasIRK: object["keys"]?["irk"]?.boolValue == true,
                alias: object["alias"]?.stringValue.flatMap { BluetoothAddress($0) },
                takesSources: object["registration"]?.stringValue == "active" && capabilities.contains("audioSwitching"),
                available: object["available"]?.boolValue == true,
                primarySource: object["primary_source"]?.stringValue.flatMap { BluetoothAddress($0) },
                secondarySource: object["secondary_source"]?.stringValue.flatMap { BluetoothAddress($0) })
        }
    }
}
