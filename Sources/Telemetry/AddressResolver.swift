/// Matches resolvable private addresses against the IRKs of configured accessories.
public struct AddressResolver<Identity: Hashable & Sendable>: Sendable {
    /// The keys to try, with the identity each one stands for.
    public var keys: [(identity: Identity, key: IdentityResolvingKey)]

    /// Creates a resolver.
    public init(keys: [(identity: Identity, key: IdentityResolvingKey)]) {
        self.keys = keys
    }

    /// The identity whose IRK generated the address, or `nil` when the address is not a resolvable
    /// private address (top two bits `0b01`) or no key matches.
    public func resolve(_ address: BluetoothAddress) -> Identity? {
        guard address.isResolvablePrivate else { return nil }
        return keys.first { $0.key.resolves(address) }?.identity
    }
}
