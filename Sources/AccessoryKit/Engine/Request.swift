/// A management request (`bridge/request/<name>`), or a `register` arriving through `/set`.
public enum Request: Hashable, Sendable {
    case showPicker(products: [String]?, timeout: DiscoveryTimeout)
    case selectCandidate(BluetoothAddress, name: String?)
    case finishDiscovery
    case dismissPicker
    case authorize(BluetoothAddress)
    case failAuthorization(BluetoothAddress)
    case rename(BluetoothAddress, name: String)
    case remove(BluetoothAddress)
    case register(BluetoothAddress, RegistrationRequest)
    case current(BluetoothAddress)
    /// The system invalidates the registration (as iOS may).
    case invalidate(BluetoothAddress)
}
