import AccessoryKit

/// The result of parsing one MQTT message from a gateway: exactly one of these, never a throw.
public enum TelemetryMessage: Hashable, Sendable {
    /// A BLE advertisement heard by a gateway.
    case advertisement(Advertisement)
    /// An accessory's own report (native format).
    case report(AccessoryReport)
    /// A gateway came online or went offline.
    case gatewayStatus(GatewayStatus)
    /// OpenMQTTGateway / Theengs tracker: the device went out of range of this gateway.
    case trackerOffline(gateway: String, address: BluetoothAddress)
    /// A well-formed message that carries nothing for aabridge (e.g. the gateway's own configuration).
    case ignored(String)
    /// A malformed message, with the reason.
    case rejected(TelemetryRejection)
}
