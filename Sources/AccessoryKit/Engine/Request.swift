/// A management request (`bridge/request/<name>`), or a `register` arriving through `/set`.
public enum Request: Hashable, Sendable {
    case showPicker(products: [String]?, timeout: DiscoveryTimeout)
    /// Sets up a picker candidate, with the keys given in `picker/select` (empty: none) and the
    /// sources it plays from, primary first (`primary_source`, `secondary_source`): an
    /// accessory of an `auto_register` product is registered with them.
    case selectCandidate(BluetoothAddress, name: String?, keys: AccessoryKeys = .init(), sources: [BluetoothAddress] = [])
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
    /// `accessory/keys`: sets, deletes or keeps each of an accessory's keys.
    case setKeys(BluetoothAddress, irk: KeyChange, encryptionKey: KeyChange)
}
