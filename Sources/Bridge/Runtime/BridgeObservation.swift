import AccessoryKit
import Configuration
import JSON

/// The bridge's own figures and state, for the console (``ComponentContext/observation``):
/// `/metrics`, `/healthz`, what a new event stream is sent first, and every publication as it
/// goes out.
struct BridgeObservation {
    fileprivate unowned let stages: RuntimeStages

    init(stages: RuntimeStages) { self.stages = stages }

    /// The one reason the bridge is not doing its job (`/healthz` says it with a 503), or nil.
    var problem: String? {
        if !stages.connection.isConnected { return "not connected to the MQTT broker" }
        if stages.core.storage.lastCommitFailed { return "storage: the last commit failed" }
        return nil
    }

    /// `bridge/health` now (also the `health` request's answer).
    func health(at now: Timestamp) -> JSONValue { stages.publisher.health(at: now) }

    /// The retained topics' current state, relative to the base topic.
    func snapshot() -> [(topic: String, payload: [UInt8])] { stages.snapshot(at: stages.clock()) }

    /// Hands every publication to `mirror` (nil: to nobody).
    func mirror(to mirror: ((String, [UInt8]) -> Void)?) { stages.publisher.mirror = mirror }

    /// `/metrics` (docs/operations.md lists every family): the bridge's, then each component's.
    func metricsText() -> String {
        let statistics = stages.connection.statistics
        let counters = stages.diagnostics.counters
        let engine = stages.engine.engine
        var text = MetricsText()
        text.family("aabridge_build_info", "gauge", "The running version (always 1).")
        text.sample("aabridge_build_info", [("version", BridgeModule.version)], 1)
        text.gauge("process_resident_memory_bytes", "Resident memory in bytes.", ResidentMemory.bytes())
        text.gauge(
            "aabridge_uptime_seconds", "Seconds since the bridge started.",
            Int(stages.clock().milliseconds(since: stages.publisher.startedAt) / 1000))
        text.gauge("aabridge_mqtt_connected", "1 while connected to the MQTT broker.", stages.connection.isConnected ? 1 : 0)
        text.counter("aabridge_mqtt_messages_received_total", "MQTT messages received.", statistics.messagesIn)
        text.counter("aabridge_mqtt_messages_sent_total", "MQTT messages published.", statistics.messagesOut)
        text.counter("aabridge_mqtt_reconnects_total", "Reconnections to the MQTT broker.", statistics.reconnects)
        var rejected = counters.rejectedByReason
        // What no parser saw: dropped by the backlog, the congestion bound or the client's bound.
        let overload = counters.telemetryRejected - rejected.values.reduce(0, +) + statistics.messagesDropped
        rejected["overload"] = max(0, overload)
        text.counter("aabridge_telemetry_rejected_total", "Gateway telemetry rejected or dropped, by reason.", label: "reason", rejected)
        text.counter("aabridge_decisions_total", "Routing decisions made.", counters.decisions)
        text.counter(
            "aabridge_errors_total", "Errors (request errors, accessory errors, storage failures), by code.", label: "code",
            counters.errorsByCode)
        text.counter("aabridge_storage_failures_total", "Commits that failed.", counters.storageFailures)
        text.family("aabridge_requests_total", "counter", "Requests answered, by name, status (ok, error) and transport (mqtt, http).")
        for (key, count) in counters.requests.sorted(by: { $0.key < $1.key }) {
            text.sample("aabridge_requests_total", [("name", key.name), ("status", key.status), ("via", key.via)], count)
        }
        text.histogram(
            "aabridge_storage_commit_duration_seconds", "Time of one storage commit (a transaction).", stages.core.storage.commitLatency)
        text.histogram(
            "aabridge_decision_duration_seconds", "Engine and storage time of a telemetry message that led to a routing decision.",
            stages.diagnostics.decisionLatency)
        text.gauge("aabridge_accessories", "Accessories paired.", engine.accessories.count)
        text.gauge("aabridge_accessories_registered", "Accessories registered (AccessoryControlDevice).", Publisher.registeredCount(engine))
        text.gauge("aabridge_accessories_available", "Accessories heard recently (available).", engine.statuses.count { $0.available })
        for (component, context) in stages.components { component.metrics(&text, context) }
        return text.text
    }
}
