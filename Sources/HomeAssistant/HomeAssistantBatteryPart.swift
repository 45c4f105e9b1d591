import AccessoryKit

/// One battery of an accessory that Home Assistant gets a sensor for.
///
/// The raw values are the keys of the `battery` object in `<base>/accessory/<ID>`, so the
/// sensor's value template and the component id both come from them.
public enum HomeAssistantBatteryPart: String, CaseIterable, Hashable, Sendable, Comparable {
    case main
    case left
    case right
    case chargingCase = "case"

    /// The parts `battery` has a level for (none for a nil battery).
    public static func present(in battery: Battery?) -> Set<HomeAssistantBatteryPart> {
        guard let battery else { return [] }
        var parts: Set<HomeAssistantBatteryPart> = []
        if battery.main != nil { parts.insert(.main) }
        if battery.left != nil { parts.insert(.left) }
        if battery.right != nil { parts.insert(.right) }
        if battery.chargingCase != nil { parts.insert(.chargingCase) }
        return parts
    }

    /// The entity's name, which Home Assistant prefixes with the device name.
    var entityName: String {
        switch self {
        case .main: "Battery"
        case .left: "Battery left"
        case .right: "Battery right"
        case .chargingCase: "Battery case"
        }
    }

    /// The component id (and unique id suffix): `battery`, `battery_left`, ...
    var componentID: String {
        self == .main ? "battery" : "battery_\(rawValue)"
    }

    /// The key of its charging flag in the `battery` object: `charging` for the single battery,
    /// `left_charging`, `right_charging`, `case_charging` (household.md).
    var chargingKey: String {
        self == .main ? "charging" : "\(rawValue)_charging"
    }

    /// The charging binary sensor's component id: `battery_charging`, `battery_left_charging`, ...
    var chargingComponentID: String { componentID + "_charging" }

    /// The charging binary sensor's name.
    var chargingEntityName: String { entityName + " charging" }

    /// Declaration order (main, left, right, case), so components come in a stable order.
    public static func < (lhs: HomeAssistantBatteryPart, rhs: HomeAssistantBatteryPart) -> Bool {
        lhs.order < rhs.order
    }

    private var order: Int {
        switch self {
        case .main: 0
        case .left: 1
        case .right: 2
        case .chargingCase: 3
        }
    }
}
