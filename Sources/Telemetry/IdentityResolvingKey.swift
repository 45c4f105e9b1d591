import AccessoryKit
import CCrypto

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
public struct IdentityResolvingKey: Hashable, Sendable {
    /// The 16 key bytes, most significant first.
    public let bytes: [UInt8]

    /// Creates a key from 16 bytes, most significant first.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Parses 32 hex digits (optionally `0x`-prefixed), most significant first.
    public init?(hex: String) {
        let digits = hex.hasPrefix("0x") || hex.hasPrefix("0X") ? String(hex.dropFirst(2)) : hex
        guard let bytes = Hex.decode(digits) else { return nil }
        self.init(bytes: bytes)
    }

    /// The random address hash function `ah(k, r)`: the low 24 bits of `r` are hashed.
    /// - Returns: the 24-bit hash, or `nil` if libcrypto fails (it does not for AES-128-ECB).
    public func hash(prand: UInt32) -> UInt32? {
        var block = [UInt8](repeating: 0, count: 16)
        block[13] = UInt8(truncatingIfNeeded: prand >> 16)
        block[14] = UInt8(truncatingIfNeeded: prand >> 8)
        block[15] = UInt8(truncatingIfNeeded: prand)
        guard let output = Self.aes128Encrypt(key: bytes, block: block) else { return nil }
        return UInt32(output[13]) << 16 | UInt32(output[14]) << 8 | UInt32(output[15])
    }

    /// Whether a resolvable private address was generated from this key.
    public func resolves(_ address: BluetoothAddress) -> Bool {
        guard address.isResolvablePrivate else { return false }
        return hash(prand: address.prand) == address.hash
    }

    /// One AES-128 block encryption (ECB, no padding) through libcrypto's EVP interface; the
    /// low-level `AES_encrypt` is deprecated in OpenSSL 3.
    static func aes128Encrypt(key: [UInt8], block: [UInt8]) -> [UInt8]? {
        guard key.count == 16, block.count == 16, let context = EVP_CIPHER_CTX_new() else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        guard EVP_EncryptInit_ex(context, EVP_aes_128_ecb(), nil, key, nil) == 1,
            EVP_CIPHER_CTX_set_padding(context, 0) == 1
        else { return nil }
        var output = [UInt8](repeating: 0, count: 32)
        var written: Int32 = 0
        guard EVP_EncryptUpdate(context, &output, &written, block, 16) == 1, written == 16 else { return nil }
        return Array(output.prefix(16))
    }
}
