import AccessoryKit
import HomeAssistant

/// No device registry: nothing is discovered.
struct NoDeviceDiscovery: DeviceDiscovery {
    func accessoryChanged(_ status: AccessoryStatus) -> Device? { nil }
    func accessoryRemoved(_ id: BluetoothAddress) -> String? { nil }
    func everything(_ statuses: [AccessoryStatus]) -> [Device] { [] }
    func candidatesChanged(_ candidates: [HomeAssistantCandidate]) -> Device? { nil }
    func gatewaysChanged(_ gateways: [HomeAssistantGateway]) -> Device? { nil }
    func sourceNamesChanged(_ names: [BluetoothAddress: String], statuses: [AccessoryStatus]) -> [Device] { [] }
    func lookalikesChanged(_ lookalikes: [BluetoothAddress: [BluetoothAddress]], statuses: [AccessoryStatus]) -> [Device] { [] }
}
