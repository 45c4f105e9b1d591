import Foundation

/// Whose advertisements a benchmark stream carries.
enum StreamKind: String, CaseIterable, Sendable {
    /// Apple "nearby info" (type 0x10, Theengs' documented payload) from 1,000 resolvable
    /// private addresses that belong to no accessory: what every iPhone, Watch and Mac nearby
    /// sends, and so the most common real traffic a gateway forwards.
    case unknown
    /// Proximity pairing from the registered accessories' own addresses.
    case known
    /// The unknown stream through the Home Assistant relay (`ha_relay`:
    /// `aabridge_relay/<scanner>/BTtoMQTT/<MAC>`, each payload with its scanner's `area`).
    /// `ingest-path` only (`AABRIDGE_BENCH_STREAMS=relay-unknown,relay-known`).
    case relayUnknown = "relay-unknown"
    /// The known stream through the relay.
    case relayKnown = "relay-known"

    /// The streams measured when `AABRIDGE_BENCH_STREAMS` is unset.
    static let standard: [StreamKind] = [.unknown, .known]

    /// Heard through the relay's topics.
    var isRelay: Bool { self == .relayUnknown || self == .relayKnown }

    /// The stream whose addresses and advertisements this one carries.
    var base: StreamKind {
        switch self {
        case .relayUnknown: .unknown
        case .relayKnown: .known
        default: self
        }
    }

    /// The first level of the stream's topics.
    var topicPrefix: String { isRelay ? "aabridge_relay" : "home" }

    /// The documented Theengs payload's manufacturer data (an iPhone's nearby info).
    static let nearbyInfo = "4c0010060319247bbc68"

    /// `AABRIDGE_BENCH_STREAMS` (`unknown,known` when unset), in the order given.
    static func configured(_ text: String?) throws -> [StreamKind] {
        guard let text, !text.isEmpty else { return standard }
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
        switch base {
        case .known: E2E.accessoryID(n).rawValue
        default: 0x4A5B_0000_0000 | UInt64(n &* 2_654_435_761 & 0xFFFF_FFFF)
        }
    }

    /// The payload of address `id` (text form) at RSSI variant `variant`.
    func payload(id: String, variant: Int) -> [UInt8] {
        // The relay adds its scanner's Home Assistant area to the same object.
        let area = isRelay ? #","area":"Kitchen""# : ""
        return switch base {
        case .known:
            // A whole proximity-pairing message (25 bytes after type and length).
            Array(#"{"id":"\#(id)","rssi":-\#(60 + variant),"manufacturerdata":"\#(E2EThroughputBenchmark.frame)"\#(area)}"#.utf8)
        default:
            Array(
                #"{"id":"\#(id)","mac_type":1,"manufacturerdata":"\#(Self.nearbyInfo)","rssi":-\#(70 + variant),"txpower":12\#(area)}"#
                    .utf8)
        }
    }
}
