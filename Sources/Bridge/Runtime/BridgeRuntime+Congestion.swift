import MQTT

extension BridgeRuntime {
    /// QoS 1 publications the broker may owe acknowledgements for before telemetry is shed.
    ///
    /// libmosquitto queues publications without bound. A telemetry flood that changes state
    /// on every message (a placement toggling with no debounce) makes the bridge publish
    /// faster than a saturated broker acknowledges: in the chaos flood 60,000 publications
    /// waited after 30 s, memory grew with them, and every response waited behind them
    /// (median 10 s). Past this bound the bridge drops gateway telemetry and `/set` updates
    /// (counted in `telemetry_rejected`) until the broker has caught up, so a response waits
    /// behind at most about this many messages (60 s flood, base 1,000: median 1.3 s).
    /// Requests and Home Assistant's status are never shed (one republish at a time). The
    /// bound grows with the accessory count because every (re)connect republishes about four
    /// retained messages per accessory at once.
    var publishCongestionLimit: Int { publishCongestionBase + 4 * productOfAccessory.count }

    /// Drops one telemetry message, counted and logged, when the broker is behind (see
    /// ``publishCongestionLimit``).
    /// - Returns: whether it was dropped.
    func shedWhenBrokerIsBehind() -> Bool {
        guard client.outstandingPublishes > publishCongestionLimit else { return false }
        counters.telemetryRejected += 1
        let admitted = rejectionLog.admit("\u{0}broker-behind", now: clock().milliseconds)
        if admitted.admitted {
            let also = admitted.suppressed > 0 ? " (\(admitted.suppressed) more since the last line)" : ""
            logger.warning("flood: the broker has not acknowledged \(client.outstandingPublishes) publications; "
                + "telemetry is dropped until it catches up\(also)")
        }
        return true
    }
}
