import AccessoryKit

/// Every accessory's state as the broker holds it (`<base>/accessory/+`), whichever instance
/// published it: a cluster's `bridge/accessories` lists these (``ClusterComponent``).
final class MirroredStates: AccessoryListing {
    private var states: [BluetoothAddress: [UInt8]] = [:]
    private(set) var changed = false

    /// A state as the broker delivered it (an empty payload clears it).
    func delivered(_ id: BluetoothAddress, _ payload: [UInt8]) {
        guard states[id] != payload else { return }
        states[id] = payload.isEmpty ? nil : payload
        changed = true
    }

    func list() -> [UInt8] { PublishedStates.array(of: states) { $0 } }

    func listIsCurrent() { changed = false }
}
