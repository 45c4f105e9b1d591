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
    /// `accessory/keys`: sets, deletes or keeps each of an accessory's keys. `irkOrder`: the
    /// byte order of a new IRK when the runtime found it already (else it is found as the
    /// accessory's addresses arrive).
    case setKeys(BluetoothAddress, irk: KeyChange, encryptionKey: KeyChange, irkOrder: IRKOrder? = nil)
    /// `accessory/home_sources`: the sources the user named for the accessory (0-2, in order).
    case setHomeSources(BluetoothAddress, [BluetoothAddress])
    /// `accessory/alias`: the public address phones and desktops know the accessory by (nil: none).
    case setAlias(BluetoothAddress, BluetoothAddress?)
    /// `source/name`: a source device's name (nil: the run-time name is removed).
    case nameSource(BluetoothAddress, String?)
    /// `accessory/reattach`: the accessory advertises from this address now (a look-alike, or
    /// any address nobody is attributed to; the runtime checks it is no one else's first).
    case reattach(BluetoothAddress, address: BluetoothAddress)
    /// `accessory/head_tracking`: the user turns the accessory's head-tracking session on or
    /// off (`AudioAccessoryHeadTracking.Handler.headTrackingStateDidChange(isActive:)`).
    case setHeadTracking(BluetoothAddress, active: Bool)
}
