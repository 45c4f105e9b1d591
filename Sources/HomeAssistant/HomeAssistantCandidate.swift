import AccessoryKit

/// A picker candidate as the bridge device's "Candidate" select offers it.
///
/// Only id and name: the select's options and templates come from these, so a candidate
/// heard again with another RSSI does not republish the bridge device's discovery.
public struct HomeAssistantCandidate: Hashable, Sendable {
    public var id: BluetoothAddress
    public var name: String

    public init(id: BluetoothAddress, name: String) {
        self.id = id
        self.name = name
    }

    /// The option shown: the name with the address, since two candidates may share a name
    /// (two pairs of the same AirPods) and an option must be unique.
    public var label: String { "\(name) (\(id))" }
}
