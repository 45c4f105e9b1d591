import AccessoryKit
import HomeAssistant
import JSON

/// What the Publisher tells a device registry (Home Assistant's MQTT discovery) as the engine's
/// outputs go out, and the discovery messages that result (retained, published in the output's
/// place: a removed accessory's discovery is cleared before its state topics, so Home Assistant
/// removes the entities before their topics turn empty). ``NoDeviceDiscovery`` when
/// `homeassistant.enabled` is off, as ``Ownership/solo()`` stands for no cluster: the Publisher
/// never asks whether there is one.
protocol DeviceDiscovery {
    typealias Device = (topic: String, payload: JSONValue)

    /// An accessory's state changed: its device, when what Home Assistant shows changed.
    mutating func accessoryChanged(_ status: AccessoryStatus) -> Device?
    /// An accessory was removed: its discovery topic to clear.
    mutating func accessoryRemoved(_ id: BluetoothAddress) -> String?
    /// Every device (the bridge's first), for a republish of everything.
    mutating func everything(_ statuses: [AccessoryStatus]) -> [Device]
    /// The picker's candidates changed.
    mutating func candidatesChanged(_ candidates: [HomeAssistantCandidate]) -> Device?
    /// The heard gateways changed (the bridge device has a sensor for each).
    mutating func gatewaysChanged(_ gateways: [HomeAssistantGateway]) -> Device?
    /// The sources' names changed (the "Home source" selects offer them).
    mutating func sourceNamesChanged(_ names: [BluetoothAddress: String], statuses: [AccessoryStatus]) -> [Device]
    /// The look-alikes each away accessory could be changed (the "Look-alike" selects).
    mutating func lookalikesChanged(_ lookalikes: [BluetoothAddress: [BluetoothAddress]], statuses: [AccessoryStatus]) -> [Device]
}
