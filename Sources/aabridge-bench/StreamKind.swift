import Foundation

/// Whose advertisements a benchmark stream carries.
enum StreamKind: String, CaseIterable, Sendable {
    /// Apple "nearby info" (type 0x10, Theengs' documented payload) from 1,000 resolvable
    /// private addresses that belong to no accessory: what every iPhone, Watch and Mac nearby
    /// sends, and so the most common real traffic a gateway forwards.
    case unknown
    /// Proximity pairing from the registered accessories' own addresses.
    case known

    /// The documented Theengs payload's manufacturer data (an iPhone's nearby info).
    static let nearbyInfo = "4c0010060319247bbc68"

    /// `AABRIDGE_BENCH_STREAMS` (`unknown,known` when unset), in the order given.
    static func configured(_ text: String?) throws -> [StreamKind] {
        guard let text, !text.isEmpty else { return allCases }
        return try text.split(separator: ",").map { name in
            guard let kind = StreamKind(rawValue: String(name)) else {
                throw E2E.Failure("AABRIDGE_BENCH_STREAMS: '\(name)' is not one of \(allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return kind
        }
    }

    /// Address `n` of the stream: the registered accessory's, or a resolvable private address
    /// (top bits 01) that no accessory has.
    func address(_ n: Int) -> UInt64 {
        switch self {
        case .known: E2E.accessoryID(n).rawValue
        case .unknown: 0x4A5B_0000_0000 | UInt64(n &* 2_654_435_761 & 0xFFFF_FFFF)
        }
    }

    /// The payload of address `id` (text form) at RSSI variant `variant`.
    func payload(id: String, variant: Int) -> [UInt8] {
        switch self {
        case .known:
            // A whole proximity-pairing message (25 bytes after type and length).
            Array(#"{"id":"\#(id)","rssi":-\#(60 + variant),"manufacturerdata":"\#(E2EThroughputBenchmark.frame)"}"#.utf8)
        case .unknown:
            Array(#"{"id":"\#(id)","mac_type":1,"manufacturerdata":"\#(Self.nearbyInfo)","rssi":-\#(70 + variant),"txpower":12}"#.utf8)
        }
    }
}
