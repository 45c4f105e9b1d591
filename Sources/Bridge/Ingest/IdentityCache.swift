import AccessoryKit
import Telemetry

/// Resolves resolvable private addresses to the identity of the accessory whose IRK
/// generated them, remembering each answer: one AES computation per key is too dear to
/// repeat for every advertisement. Bounded: a flood of fresh random addresses empties the
/// cache instead of growing it.
struct IdentityCache {
    let resolver: AddressResolver<AccessoryKit.BluetoothAddress>
    private var resolved: [UInt64: AccessoryKit.BluetoothAddress?] = [:]
    static let limit = 10_000

    init(resolver: AddressResolver<AccessoryKit.BluetoothAddress>) { self.resolver = resolver }

    /// The identity behind `address` when a configured IRK resolves it; any other address
    /// is its own identity.
    mutating func identity(of address: AccessoryKit.BluetoothAddress) -> AccessoryKit.BluetoothAddress {
        // Resolvable private addresses have 0b01 in the two most significant bits.
        guard !resolver.keys.isEmpty, (address.rawValue >> 46) & 0b11 == 0b01 else { return address }
        if let cached = resolved[address.rawValue] { return cached ?? address }
        if resolved.count >= Self.limit { resolved.removeAll(keepingCapacity: true) }
        let identity = resolver.resolve(Telemetry.BluetoothAddress(address))
        resolved[address.rawValue] = .some(identity)
        return identity ?? address
    }
}
