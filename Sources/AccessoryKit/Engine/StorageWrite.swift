/// A durable change the runtime commits before it acknowledges the input that caused it.
public enum StorageWrite: Hashable, Sendable {
    case upsertAccessory(Accessory)
    case deleteAccessory(BluetoothAddress)
    case upsertRegistration(BluetoothAddress, Registration)
    case deleteRegistration(BluetoothAddress)
    /// The configured migration ran; it must not run again.
    case migrationComplete
}
