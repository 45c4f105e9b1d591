/// What `bridge/health` counts besides the MQTT client's own statistics.
struct RuntimeCounters {
    var telemetryRejected = 0
    /// Fast Pair service data of known accessories in a layout the decoder does not know
    /// (`fast_pair_ignored`, an aabridge addition to the contract's health object).
    var fastPairIgnored = 0
    var decisions = 0
    var errors = 0
    var storageFailures = 0
}
