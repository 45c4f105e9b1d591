import AccessoryKit

/// Matches resolvable private addresses against the IRKs of configured accessories, and
/// remembers the answers.
///
/// Every resolution tries each key with one AES block, and a busy room advertises hundreds of
/// random addresses that rotate every 15 minutes, so both answers are cached: the identity an
/// address resolved to, and that it resolved to none. The cache holds at most
/// ``cacheCapacity`` addresses; when full it starts again empty (rotated addresses are never
/// heard again, so nothing finer than that is worth its bookkeeping).
public struct AddressResolver<Identity: Hashable & Sendable>: Sendable {
    /// The keys to try, with the identity each one stands for. Changing them forgets the cache.
    public var keys: [(identity: Identity, key: IdentityResolvingKey)] {
        didSet { cache.removeAll(keepingCapacity: true) }
    }
    /// The most addresses remembered.
    public let cacheCapacity: Int
    /// Addresses already tried: the identity found, or `nil` when no key resolved it.
    private var cache: [BluetoothAddress: Identity?] = [:]

    /// Creates a resolver.
    /// - Parameter cacheCapacity: the most addresses remembered (at least 1).
    public init(keys: [(identity: Identity, key: IdentityResolvingKey)], cacheCapacity: Int = 10_000) {
        self.keys = keys
        self.cacheCapacity = max(1, cacheCapacity)
    }

    /// How many addresses are remembered now.
    public var cachedCount: Int { cache.count }

    /// The identity whose IRK generated the address, or `nil` when the address is not a resolvable
    /// private address (``BluetoothAddress/isResolvablePrivate``) or no key matches.
    public mutating func resolve(_ address: BluetoothAddress) -> Identity? {
        guard !keys.isEmpty, address.isResolvablePrivate else { return nil }
        if let known = cache[address] { return known }
        if cache.count >= cacheCapacity { cache.removeAll(keepingCapacity: true) }
        let identity = keys.first { $0.key.resolves(address) }?.identity
        cache[address] = .some(identity)
        return identity
    }
}
