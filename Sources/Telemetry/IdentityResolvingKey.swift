import AccessoryKit
import CCrypto
import Synchronization

/// A 128-bit Identity Resolving Key, which lets aabridge recognise an accessory behind its
/// rotating resolvable private addresses.
///
/// Bluetooth Core Specification, Vol 3 Part H, 2.2.2 "Random address hash function ah":
/// `ah(k, r) = e(k, r') mod 2^24` where `r' = padding || r` (104 zero bits then the 24-bit `r`)
/// and `e` is AES-128 (Vol 3 Part H, 2.2.1). The specification writes keys and data most
/// significant octet first, and its sample data (Vol 3 Part H, Appendix D.7: IRK
/// `ec0234a357c8ad05341010a60a397d9b`, prand `708194`, hash `0dfbaa`) follows that convention, so
/// the key and the block are handed to AES in exactly that byte order and `mod 2^24` keeps the
/// last three output octets. IRKs exported from some stacks (e.g. BlueZ's `info` files, Apple's
/// keychain) may be stored least significant octet first: reverse those before use.
///
/// A resolver tries every configured key on each unseen address, so each key keeps one
/// AES-128-ECB context with its key schedule done once, shared by all copies of the key.
/// Equality and hashing look at ``bytes`` only.
public struct IdentityResolvingKey: Hashable, Sendable {
    /// The 16 key bytes, most significant first.
    public let bytes: [UInt8]
    /// `nil` only when libcrypto could not set the context up (out of memory); ``hash(prand:)``
    /// then answers `nil`, as it did when every call set up its own context.
    private let cipher: AES128ECB?

    /// Creates a key from 16 bytes, most significant first.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
        cipher = AES128ECB(key: bytes)
    }

    /// Parses 32 hex digits (optionally `0x`-prefixed), most significant first.
    public init?(hex: String) {
        let digits = hex.hasPrefix("0x") || hex.hasPrefix("0X") ? String(hex.dropFirst(2)) : hex
        guard let bytes = Hex.decode(digits) else { return nil }
        self.init(bytes: bytes)
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.bytes == rhs.bytes }

    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }

    /// The random address hash function `ah(k, r)`: the low 24 bits of `r` are hashed.
    /// - Returns: the 24-bit hash, or `nil` if libcrypto fails (it does not for AES-128-ECB).
    public func hash(prand: UInt32) -> UInt32? {
        cipher?.ah(prand: prand)
    }

    /// Whether a resolvable private address was generated from this key.
    public func resolves(_ address: BluetoothAddress) -> Bool {
        guard address.isResolvablePrivate else { return false }
        return hash(prand: address.prand) == address.hash
    }

    /// One AES-128 block encryption (ECB, no padding) with a context of its own: for callers
    /// with a key they will not use again.
    static func aes128Encrypt(key: [UInt8], block: [UInt8]) -> [UInt8]? {
        guard key.count == 16, block.count == 16, let cipher = AES128ECB(key: key) else { return nil }
        return cipher.encrypt(block)
    }
}

/// libcrypto AES-128-ECB encryption contexts, one per key, each initialised (cipher fetched, key
/// schedule expanded) once and reused for every block. The EVP interface is used because the
/// low-level `AES_encrypt` is deprecated in OpenSSL 3; `EVP_Cipher` goes straight to the
/// provider's cipher function, without `EVP_EncryptUpdate`'s buffering checks (whole blocks, no
/// padding: nothing is ever buffered in a context between calls, so a context needs no
/// finalisation or re-initialisation).
///
/// An `EVP_CIPHER_CTX` must not be used by two threads at once, and copies of a key (and the
/// resolvers holding them) may live on any thread, so the contexts sit in a `Mutex`: taken once
/// per resolution (not per key), uncontended in the bridge, where one ingest stage owns the
/// resolver.
final class AES128ECB: Sendable {
    let count: Int
    private let contexts: Mutex<[OpaquePointer]>

    /// - Returns: `nil` if a key is not 16 bytes or libcrypto cannot set a context up.
    init?(keys: [[UInt8]]) {
        var contexts: [OpaquePointer] = []
        contexts.reserveCapacity(keys.count)
        for key in keys {
            guard key.count == 16, let context = EVP_CIPHER_CTX_new() else { break }
            guard EVP_EncryptInit_ex(context, EVP_aes_128_ecb(), nil, key, nil) == 1, EVP_CIPHER_CTX_set_padding(context, 0) == 1
            else {
                EVP_CIPHER_CTX_free(context)
                break
            }
            contexts.append(context)
        }
        guard contexts.count == keys.count else {
            for context in contexts { EVP_CIPHER_CTX_free(context) }
            return nil
        }
        count = keys.count
        self.contexts = Mutex(contexts)
    }

    convenience init?(key: [UInt8]) { self.init(keys: [key]) }

    deinit {
        contexts.withLock { for context in $0 { EVP_CIPHER_CTX_free(context) } }
    }

    /// Encrypts one 16-byte block with the first key.
    func encrypt(_ block: [UInt8]) -> [UInt8]? {
        guard block.count == 16, count > 0 else { return nil }
        // Everything the context touches is made inside the lock from values (not pointers
        // from outside), which is what lets the region checker see the context never escapes.
        return contexts.withLock { contexts -> [UInt8]? in
            var output = [UInt8](repeating: 0, count: 16)
            guard EVP_Cipher(contexts[0], &output, block, 16) > 0 else { return nil }
            return output
        }
    }

    /// `ah(k, r)` with the first key.
    func ah(prand: UInt32) -> UInt32? {
        guard count > 0 else { return nil }
        switch firstMatch(prand: prand, hash: nil) {
        case .hash(let hash): return hash
        default: return nil
        }
    }

    enum Match: Equatable {
        case key(Int), hash(UInt32), none, failed
    }

    /// Tries the keys in order: `ah(k, r)` (most significant octet first, padded to a block),
    /// keeping the last three output octets, compared with `hash`. With `hash` nil, answers the
    /// first key's hash. No heap allocation: this is the resolver's inner loop.
    func firstMatch(prand: UInt32, hash: UInt32?) -> Match {
        contexts.withLock { contexts -> Match in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { buffer -> Match in
                let block = buffer.baseAddress!
                block.initialize(repeating: 0, count: 16)
                block[13] = UInt8(truncatingIfNeeded: prand >> 16)
                block[14] = UInt8(truncatingIfNeeded: prand >> 8)
                block[15] = UInt8(truncatingIfNeeded: prand)
                let out = block + 16
                for index in contexts.indices {
                    guard EVP_Cipher(contexts[index], out, block, 16) > 0 else { return .failed }
                    let result = UInt32(out[13]) << 16 | UInt32(out[14]) << 8 | UInt32(out[15])
                    guard let hash else { return .hash(result) }
                    if result == hash { return .key(index) }
                }
                return .none
            }
        }
    }
}
