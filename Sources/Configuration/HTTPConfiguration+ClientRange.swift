extension HTTPConfiguration {
    /// One entry of `http.allowed_clients`: an IPv4 address (`172.30.32.2`) or a CIDR block
    /// (`192.168.1.0/24`). The server listens on IPv4 only, so IPv4 is all a client can be.
    public struct ClientRange: Hashable, Sendable, CustomStringConvertible {
        /// The block's first address, in host byte order.
        public var network: UInt32
        /// The prefix length, 0-32 (32: one address).
        public var prefixLength: Int

        public init(network: UInt32, prefixLength: Int) {
            self.prefixLength = prefixLength
            self.network = network & Self.mask(prefixLength)
        }

        /// `A.B.C.D` or `A.B.C.D/N`, or nil. A block whose address has bits set past its prefix
        /// (`192.168.1.7/24`) is refused: it is more likely a typo than meant.
        public init?(_ text: String) {
            let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard let address = Self.ipv4(parts[0]) else { return nil }
            var length = 32
            if parts.count == 2 {
                guard parts[1].count <= 2, parts[1].allSatisfy(\.isASCIIDigit), let value = Int(parts[1]), (0...32).contains(value)
                else { return nil }
                length = value
            }
            guard address & Self.mask(length) == address else { return nil }
            self.init(network: address, prefixLength: length)
        }

        /// Whether `address` (host byte order) lies in the block.
        public func contains(_ address: UInt32) -> Bool { address & Self.mask(prefixLength) == network }

        /// 127.0.0.0/8: this machine's own loopback addresses.
        public static let loopback = ClientRange(network: 0x7F00_0000, prefixLength: 8)

        /// A dotted IPv4 address in host byte order, or nil.
        public static func ipv4(_ text: Substring) -> UInt32? {
            let octets = text.split(separator: ".", omittingEmptySubsequences: false)
            guard octets.count == 4 else { return nil }
            var value: UInt32 = 0
            for octet in octets {
                guard (1...3).contains(octet.count), octet.allSatisfy(\.isASCIIDigit), let byte = UInt8(octet) else { return nil }
                value = value << 8 | UInt32(byte)
            }
            return value
        }

        /// `A.B.C.D` for an address in host byte order.
        public static func dotted(_ address: UInt32) -> String {
            [24, 16, 8, 0].map { String((address >> UInt32($0)) & 0xFF) }.joined(separator: ".")
        }

        private static func mask(_ length: Int) -> UInt32 { length == 0 ? 0 : UInt32.max << UInt32(32 - length) }

        public var description: String { prefixLength == 32 ? Self.dotted(network) : "\(Self.dotted(network))/\(prefixLength)" }
    }
}

extension HTTPConfiguration {
    /// Whether a client (IPv4, host byte order) may connect: anyone when `allowed_clients`
    /// is empty, else a listed one or this machine's loopback (a health check inside the
    /// container needs no entry).
    public func admitsClient(_ address: UInt32) -> Bool {
        allowedClients.isEmpty || ClientRange.loopback.contains(address) || allowedClients.contains { $0.contains(address) }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
