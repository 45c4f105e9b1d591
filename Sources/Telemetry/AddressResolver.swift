import AccessoryKit

/// Matches resolvable private addresses against the IRKs of configured accessories, and
/// remembers the answers.
///
/// Every resolution tries each key with one AES block, and a busy room advertises hundreds of
/// random addresses that rotate every 15 minutes, so both answers are cached: the identity an
/// address resolved to, and that it resolved to none. The cache holds at most
/// ``cacheCapacity`` addresses; when full it starts again empty (rotated addresses are never
/// heard again, so nothing finer than that is worth its bookkeeping). Its storage is kept
/// across those resets, so a flood of fresh addresses costs one hash table sized for
/// ``cacheCapacity`` entries of 12 bytes (16,384 slots, about 200 KiB, at the default 10,000)
/// and never more.
public struct AddressResolver<Identity: Hashable & Sendable>: Sendable {
    /// The keys to try, with the identity each one stands for. Changing them forgets the cache.
    public var keys: [(identity: Identity, key: IdentityResolvingKey)] {
        didSet {
            table = ResolutionTable(keys: keys.map(\.key), capacity: cacheCapacity, reusing: table)
            identities = keys.map(\.identity)
        }
    }
    /// The most addresses remembered.
    public let cacheCapacity: Int
    /// The keys' ciphers and the cache, by key index: none of it generic, so the work per
    /// sighting is compiled once, in this module, whatever `Identity` a client picks.
    private var table: ResolutionTable
    /// `keys[i].identity`, for the index the table answers.
    private var identities: [Identity]

    /// Creates a resolver.
    /// - Parameter cacheCapacity: the most addresses remembered (at least 1).
    public init(keys: [(identity: Identity, key: IdentityResolvingKey)], cacheCapacity: Int = 10_000) {
        self.keys = keys
        self.cacheCapacity = max(1, cacheCapacity)
        table = ResolutionTable(keys: keys.map(\.key), capacity: self.cacheCapacity, reusing: nil)
        identities = keys.map(\.identity)
    }

    /// How many addresses are remembered now.
    public var cachedCount: Int { table.cachedCount }

    /// The identity whose IRK generated the address, or `nil` when the address is not a resolvable
    /// private address (``BluetoothAddress/isResolvablePrivate``) or no key matches.
    public mutating func resolve(_ address: BluetoothAddress) -> Identity? {
        guard let index = table.resolve(address) else { return nil }
        return identities[index]
    }
}

/// The non-generic part of ``AddressResolver``: the keys in order and the answers remembered,
/// as the index of the key that resolved an address or `-1` for none.
struct ResolutionTable: Sendable {
    private let keys: [IdentityResolvingKey]
    /// The keys' contexts in one lock: `nil` only if libcrypto could not set them up, when each
    /// key is tried on its own.
    private let ring: AES128ECB?
    private let capacity: Int
    private var cache: [BluetoothAddress: Int32]

    /// - Parameter reusing: a previous table whose cache storage is kept (emptied).
    init(keys: [IdentityResolvingKey], capacity: Int, reusing previous: ResolutionTable?) {
        self.keys = keys
        ring = keys.isEmpty ? nil : AES128ECB(keys: keys.map(\.bytes))
        self.capacity = capacity
        if var cache = previous?.cache {
            cache.removeAll(keepingCapacity: true)
            self.cache = cache
        } else {
            cache = [:]
        }
    }

    var cachedCount: Int { cache.count }

    /// The index of the first key that resolves `address`, remembered.
    mutating func resolve(_ address: BluetoothAddress) -> Int? {
        guard !keys.isEmpty, address.isResolvablePrivate else { return nil }
        if let known = cache[address] { return known < 0 ? nil : Int(known) }
        if cache.count >= capacity { cache.removeAll(keepingCapacity: true) }
        var found: Int32 = -1
        switch ring?.firstMatch(prand: address.prand, hash: address.hash) {
        case .key(let index): found = Int32(truncatingIfNeeded: index)
        case .none?, .hash?: break
        // libcrypto failed: try the keys one by one (each has a context of its own).
        case .failed?, nil:
            if let index = keys.firstIndex(where: { $0.resolves(address) }) { found = Int32(truncatingIfNeeded: index) }
        }
        cache[address] = found
        return found < 0 ? nil : Int(found)
    }
}
