/// A durable change the runtime commits before it acknowledges the input that caused it.
public enum StorageWrite: Hashable, Sendable {
    case upsertAccessory(Accessory)
    case deleteAccessory(BluetoothAddress)
    case upsertRegistration(BluetoothAddress, Registration)
    case deleteRegistration(BluetoothAddress)
    /// An accessory's keys, replaced (both absent: none stored).
    case saveKeys(BluetoothAddress, AccessoryKeys)
    /// The address an accessory was followed to without a key, so a restart still knows it.
    case saveFollowedAddress(BluetoothAddress, BluetoothAddress?)
    /// An accessory's home sources, replaced (empty: none).
    case saveHomeSources(BluetoothAddress, [BluetoothAddress])
    /// An accessory's alias, replaced (nil: none).
    case saveAlias(BluetoothAddress, BluetoothAddress?)
    /// A source device's run-time name, replaced (nil: none).
    case saveSourceName(BluetoothAddress, String?)
    /// What re-attaching the accessory needs after a restart (its profile, its last room).
    case saveTrace(BluetoothAddress, AccessoryTrace)
    /// The configured migration ran; it must not run again.
    case migrationComplete

    /// The accessory whose rows the write changes (nil: the bridge's own rows, `meta` and the
    /// source names).
    public var accessory: BluetoothAddress? {
        switch self {
        case .upsertAccessory(let accessory): accessory.id
        case .deleteAccessory(let id), .upsertRegistration(let id, _), .deleteRegistration(let id), .saveKeys(let id, _),
            .saveFollowedAddress(let id, _), .saveHomeSources(let id, _), .saveAlias(let id, _), .saveTrace(let id, _):
            id
        case .saveSourceName, .migrationComplete: nil
        }
    }
}
