import AccessoryKit
import Storage
import Telemetry

/// What the stages report about the bridge itself: the counters `bridge/health` shows and
/// the log, with the rate limit that keeps a flood of bad input from flooding the log.
/// Shared by the stages of one runtime and used only from its task.
final class Diagnostics {
    let logger: BridgeLogger
    var counters = RuntimeCounters()
    private var rateLimiter = RateLimiter()

    init(logger: BridgeLogger) { self.logger = logger }

    /// A line at most once a minute per key; `suppressed` words what was held back since.
    func limited(
        _ key: RateLimitKey, at now: Timestamp, _ level: BridgeLogger.Level,
        _ message: @autoclosure () -> String, suppressed: (Int) -> String
    ) {
        let admission = rateLimiter.admit(key, now: now.milliseconds)
        guard admission.admitted else { return }
        logger.log(level, message() + (admission.suppressed > 0 ? suppressed(admission.suppressed) : ""))
    }

    /// Telemetry refused from a gateway: counted, and logged at most once a minute per gateway.
    func rejectTelemetry(gateway: String, reason: String, at now: Timestamp) {
        counters.telemetryRejected += 1
        limited(.gateway(gateway), at: now, .warning, "telemetry from gateway '\(gateway)' rejected: \(reason)") {
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
        counters.errors += 1
        logger.error("storage (\(context)): \(error.message)")
    }
}
