import Telemetry

/// Telemetry the bridge refused: where it came from, the bounded reason `/metrics` counts it
/// by (`aabridge_telemetry_rejected_total`'s `reason`), and the line the log says.
struct TelemetryRefusal: Sendable, Equatable {
    /// The `reason` label: never free text, so a flood of odd payloads cannot grow the metrics.
    enum Reason: Sendable, Hashable {
        /// A parser's code (`invalidJSON`, `invalidProximityPairing`, ...).
        case parser(TelemetryRejection.Code)
        /// Telemetry or a `/set` naming no known accessory.
        case unknownAccessory
        /// A known accessory's telemetry with content it cannot use.
        case invalidContent
        /// Telemetry published retained: the broker would hand it out again at every
        /// subscription, an old in-ear frame as fresh after every restart.
        case retained

        var label: String {
            switch self {
            case .parser(let code): code.rawValue
            case .unknownAccessory: "unknownAccessory"
            case .invalidContent: "invalidContent"
            case .retained: "retained"
            }
        }
    }

    /// The gateway's name (or `set`); the log is rate-limited per gateway.
    var gateway: String
    var reason: Reason
    var message: String
}
