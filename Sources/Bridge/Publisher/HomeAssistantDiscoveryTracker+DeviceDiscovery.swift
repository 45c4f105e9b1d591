import AccessoryKit
import HomeAssistant

/// Home Assistant's MQTT discovery (`homeassistant.enabled`).
extension HomeAssistantDiscoveryTracker: DeviceDiscovery {
    mutating func accessoryChanged(_ status: AccessoryStatus) -> Device? { changed(status) }
    mutating func accessoryRemoved(_ id: BluetoothAddress) -> String? { removed(id) }
}
