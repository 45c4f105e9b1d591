/// Why the bluez gateway hears nothing: each a cause the user can remove, and each one the
/// client retries after by itself.
public enum BlueZFault: String, Hashable, Sendable {
    /// The system bus cannot be reached (no socket: a container without it mounted).
    case noSystemBus
    /// Nothing owns `org.bluez` on the bus: bluetoothd is not running.
    case notRunning
    /// BlueZ lists no adapter, or not the configured one (unplugged, removed at run time).
    case noAdapter
    /// The bus's policy, or BlueZ, refused a call (`AccessDenied`, `NotPermitted`, EACCES).
    case permissionDenied
    /// The adapter is powered off (the client never powers it).
    case adapterOff
}
