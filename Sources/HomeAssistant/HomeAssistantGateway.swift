/// A heard gateway as the bridge device's per-gateway diagnostic sensor shows it: the
/// configured entry it was heard through and the name its topic carries (`bridge/gateways`).
public struct HomeAssistantGateway: Hashable, Sendable {
    public var entry: String
    public var name: String

    public init(entry: String, name: String) {
        self.entry = entry
        self.name = name
    }

    /// A stable, unique part of the sensor's unique id: the name's letters and digits (for
    /// reading) and a hash of entry and name (two names that differ only in punctuation, or one
    /// name under two entries, stay two sensors). FNV-1a, so it is the same in every build.
    var uniquePart: String {
        var hash: UInt32 = 0x811C_9DC5
        for byte in "\(entry)/\(name)".utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        let readable = String(name.lowercased().unicodeScalars.filter { ($0 >= "a" && $0 <= "z") || ($0 >= "0" && $0 <= "9") }.prefix(32))
        let hex = String(hash, radix: 16)
        return "\(readable)_\(String(repeating: "0", count: 8 - hex.count))\(hex)"
    }
}
