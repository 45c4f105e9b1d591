/// An AccessorySetupKit session event (`ASAccessoryEvent`).
public struct SetupEvent: Hashable, Sendable {
    /// Event types with their raw values (part of the API).
    public enum EventType: Int, CaseIterable, Hashable, Sendable {
        case unknown = 0
        case activated = 10
        case invalidated = 11
        case migrationComplete = 20
        case accessoryAdded = 30
        case accessoryRemoved = 31
        case accessoryChanged = 32
        /// Ours: Apple does not publish this raw value.
        case accessoryDiscovered = 33
        case pickerDidPresent = 40
        case pickerDidDismiss = 50
        case pickerSetupBridging = 60
        case pickerSetupFailed = 70
        case pickerSetupPairing = 80
        case pickerSetupRename = 90
        /// aabridge's (no raw value of Apple's): a look-alike was re-attached to an accessory
        /// that had been away (household.md, "Found again after a night").
        case accessoryReattached = 1_001
        /// aabridge's: an address that could be an away accessory was first heard.
        case lookalikeHeard = 1_002
        /// aabridge's: an accessory's head-tracking session became active or stopped being
        /// active (`headTrackingStateDidChange(isActive:)`); the state says which.
        case headTrackingChanged = 1_003
        /// aabridge's: an automatic re-attachment did not hold (a rival look-alike of the same
        /// profile, or the accessory itself heard elsewhere); the accessory is away again and
        /// both addresses are offered as look-alikes.
        case reattachUndone = 1_004

        /// Only accessory events carry an accessory.
        public var carriesAccessory: Bool {
            switch self {
            case .accessoryAdded, .accessoryRemoved, .accessoryChanged, .accessoryDiscovered, .accessoryReattached,
                .headTrackingChanged, .reattachUndone:
                true
            default: false
            }
        }

        /// The raw value the API shows: Apple's, or nil for aabridge's own events.
        public var apiRaw: Int? { rawValue >= 1_000 ? nil : rawValue }

        /// The API name (`accessoryAdded`).
        public var name: String { String(describing: self) }
    }

    public let type: EventType
    /// The accessory, only for accessory events (see `EventType.carriesAccessory`).
    public let accessory: Accessory?
    /// The error for failures and error dismissals.
    public let error: SetupError?

    /// Creates an event. An accessory given with a lifecycle or picker event is dropped,
    /// so no event can ever carry one where Apple's does not.
    public init(_ type: EventType, accessory: Accessory? = nil, error: SetupError? = nil) {
        self.type = type
        self.accessory = type.carriesAccessory ? accessory : nil
        self.error = error
    }
}
