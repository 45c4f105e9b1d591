/// What `bridge/health` counts besides the MQTT client's own statistics.
struct RuntimeCounters {
    var telemetryRejected = 0
    var decisions = 0
    var errors = 0
    var storageFailures = 0
}
