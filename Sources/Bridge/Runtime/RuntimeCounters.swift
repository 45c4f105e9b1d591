/// What `bridge/health` counts besides the MQTT client's own statistics.
struct RuntimeCounters {
    var telemetryRejected = 0
    /// Fast Pair service data of known accessories in a layout the decoder does not know
    /// (`fast_pair_ignored`, an aabridge addition to the contract's health object).
    var fastPairIgnored = 0
    var decisions = 0
    var errors = 0
    var storageFailures = 0
    /// Errors by code (`aabridge_errors_total`): codes are the API's enumerations, a bounded set.
    var errorsByCode: [String: Int] = [:]
    /// Telemetry a parser or the ingest refused, by reason (``TelemetryRefusal/Reason/label``).
    var rejectedByReason: [String: Int] = [:]
    /// Requests answered, by name (a known one, or `other`), status and transport.
    var requests: [RequestCount: Int] = [:]

    struct RequestCount: Hashable, Comparable {
        var name: String
        var status: String
        var via: String

        static func < (a: RequestCount, b: RequestCount) -> Bool { (a.name, a.status, a.via) < (b.name, b.status, b.via) }
    }
}
