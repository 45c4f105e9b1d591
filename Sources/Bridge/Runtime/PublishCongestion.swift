import AccessoryKit
import MQTT

/// The congestion bound: QoS 1 publications the broker may owe acknowledgements for before
/// telemetry is shed.
///
/// libmosquitto queues publications without bound. A telemetry flood that changes state on
/// every message makes the bridge publish faster than a saturated broker acknowledges; past
/// this bound the bridge drops gateway telemetry (counted in `telemetry_rejected`) until the
/// broker has caught up, so a response waits behind at most about this many messages.
/// Requests, `/set` and statuses are never shed. The bound grows with the accessory count
/// because every (re)connect republishes about four retained messages per accessory at once.
/// (docs/reliability.md has the figures.)
struct PublishCongestion {
    /// The bound without accessories; a test may lower it.
    var base = 1_000

    func limit(accessories: Int) -> Int { base + 4 * accessories }

    /// Whether one sheddable message is dropped now: counted, and logged at most once a minute.
    func sheds(_ connection: any MQTTConnection, accessories: Int, diagnostics: Diagnostics, at now: Timestamp) -> Bool {
        let outstanding = connection.outstandingPublishes
        guard outstanding > limit(accessories: accessories) else { return false }
        diagnostics.counters.telemetryRejected += 1
        let line = "flood: the broker has not acknowledged \(outstanding) publications; telemetry is dropped until it catches up"
        diagnostics.limited(.brokerBehind, at: now, .warning, line) { " (\($0) more since the last line)" }
        return true
    }
}
