/// Where ``BlueZClient`` stands: scanning, or the fault that keeps it from it.
public struct BlueZState: Hashable, Sendable {
    /// How discovery runs.
    public enum Mode: String, Hashable, Sendable {
        /// LE discovery with ``DiscoveryFilter/documented``.
        case active
        /// An `or_patterns` advertisement monitor registered (with discovery running beside it).
        case passive
    }

    /// The adapter in use (`hci0`), once one is.
    public var adapter: String?
    /// How it scans; nil while a fault keeps it from scanning.
    public var mode: Mode?
    public var fault: BlueZFault?
    /// Passive scanning was asked for and BlueZ does not offer it (the mode is then active).
    public var passiveUnavailable = false
    /// BlueZ's or libsystemd's own words for the fault, for the log.
    public var detail: String?

    public init(
        adapter: String? = nil, mode: Mode? = nil, fault: BlueZFault? = nil, passiveUnavailable: Bool = false, detail: String? = nil
    ) {
        self.adapter = adapter
        self.mode = mode
        self.fault = fault
        self.passiveUnavailable = passiveUnavailable
        self.detail = detail
    }
}
