import AccessoryKit
import Configuration
import MQTT
import Storage
import Telemetry

/// What the stages report about the bridge itself: the counters `bridge/health` shows and
/// the log, with the rate limit that keeps a flood of bad input from flooding the log.
/// Shared by the stages of one runtime and used only from its task.
final class Diagnostics {
    let logger: BridgeLogger
    var counters = RuntimeCounters()
    private var rateLimiter = RateLimiter()
    /// Engine and storage time of telemetry that led to a decision (``RuntimeCore``).
    let decisionLatency = LatencyHistogram()

    init(logger: BridgeLogger) { self.logger = logger }

    /// The runtime's: the configured level and format, warnings forwarded to `bridge/log`
    /// (QoS 0: a log line is not worth a retry).
    convenience init(
        configuration: BridgeConfiguration, connection: any MQTTPublishing, topics: Topics, clock: @escaping @Sendable () -> Timestamp
    ) {
        let level = BridgeLogger.Level(name: configuration.log.level.rawValue) ?? .info
        let forwarding = Payloads()
        self.init(
            logger: BridgeLogger(minimum: level, json: configuration.log.format.rawValue == "json", clock: clock) { level, message in
                connection.enqueue(
                    topic: topics.bridgeLog, payload: forwarding.log(level: level.name, message: message, at: clock()).bytes,
                    qos: .atMostOnce, retain: false)
            })
    }

    /// A line at most once a minute per key; `suppressed` words what was held back since.
    func limited(
        _ key: RateLimitKey, at now: Timestamp, _ level: BridgeLogger.Level,
        _ message: @autoclosure () -> String, suppressed: (Int) -> String
    ) {
        let admission = rateLimiter.admit(key, now: now.milliseconds)
        guard admission.admitted else { return }
        logger.log(level, message() + (admission.suppressed > 0 ? suppressed(admission.suppressed) : ""))
    }

    /// Telemetry refused from a gateway: counted by its reason, and logged at most once a
    /// minute per gateway.
    func refuseTelemetry(_ refusal: TelemetryRefusal, at now: Timestamp) {
        counters.telemetryRejected += 1
        counters.rejectedByReason[refusal.reason.label, default: 0] += 1
        limited(.gateway(refusal.gateway), at: now, .warning, "telemetry from gateway '\(refusal.gateway)' rejected: \(refusal.message)") {
            " (\($0) more rejected since the last report)"
        }
    }

    /// Fast Pair service data of a known accessory that was not read (an unknown layout):
    /// counted, and its bytes logged at debug level at most once a minute. Not a warning: a
    /// product may put data of its own under the Fast Pair UUID (the shipped example product
    /// does), and every sighting of it would say so.
    func ignoreFastPair(
        _ accessory: BluetoothAddress, reason: FastPairAdvertisement.UnknownLayout, data: [UInt8], at now: Timestamp
    ) {
        counters.fastPairIgnored += 1
        limited(
            .fastPairIgnored, at: now, .debug,
            "Fast Pair service data of accessory \(accessory) ignored: \(reason): \(Hex.encode(data))"
        ) { " (\($0) more ignored since the last report)" }
    }

    /// A commit that failed: counted as a storage failure and an error, and logged.
    func storageFailed(_ error: StorageError, context: String) {
        counters.storageFailures += 1
        countError("storage")
        logger.error("storage (\(context)): \(error.message)")
    }

    // MARK: - Metrics

    /// An error, counted in `errors` and by its code.
    func countError(_ code: String) {
        counters.errors += 1
        counters.errorsByCode[code, default: 0] += 1
    }

    /// A request answered (a form's press is answered like one). Unknown names are counted as
    /// `other`, so a client inventing names cannot make the metrics grow.
    func countRequest<Value>(_ name: String, _ result: Result<Value, ResponseError>, overHTTP: Bool) {
        let known = RequestName(rawValue: name) != nil || FormName(rawValue: name) != nil
        let status = if case .success = result { "ok" } else { "error" }
        counters.requests[.init(name: known ? name : "other", status: status, via: overHTTP ? "http" : "mqtt"), default: 0] += 1
    }
}
