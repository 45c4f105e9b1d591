import AccessoryKit
import Telemetry

/// What one incoming message amounts to, as ``Ingest`` decided: at most one thing for the
/// core to do, plus what the runtime reports about the message. A value without heap
/// allocation in the common case (one sighting), since every gateway message makes one.
struct IngestOutcome {
    enum Effect {
        case none
        /// Telemetry for the engine. `refresh`: the accessory whose retained state may be
        /// republished when it has not been for a while (a sighting that changed nothing).
        case telemetry(EngineInput, context: StaticString, refresh: BluetoothAddress?)
        case request(IncomingRequest)
        /// Home Assistant announced itself: republish discovery and state (after a delay).
        case homeAssistantBirth
    }

    var effect: Effect = .none
    /// The gateway list changed (a new gateway, or one's state): republish `bridge/gateways`.
    var gatewaysChanged = false
    /// Counted in `telemetry_rejected` and logged at most once a minute per gateway. Invalid
    /// content for a known accessory is one too, and its error also reaches the accessory's
    /// error topic through the engine (``Effect/telemetry``).
    var rejection: (gateway: String, reason: String)?
    /// Fast Pair service data of a known accessory in a layout the decoder does not know: the
    /// sighting went on without it. Counted in `fast_pair_ignored`, its bytes logged at debug
    /// level at most once a minute; not a rejection, and no warning (a product may use the
    /// Fast Pair service UUID for data of its own, as the shipped example product does).
    var fastPairIgnored: (accessory: BluetoothAddress, reason: FastPairAdvertisement.UnknownLayout, data: [UInt8])?
    /// A look-alike was listed for the first time: the `lookalike_heard` event goes out.
    var lookalikeHeard = false
    /// An info line for the log and `bridge/log` (a look-alike re-attached by the rules).
    var announcement: String?
    /// Problems that appeared on the gateway that heard it: each logged once, as a warning.
    var gatewayProblems: [GatewayTracker.Appeared] = []
    /// A line for the log (gateway status changes, refused retained requests).
    var notice: (level: BridgeLogger.Level, message: String)?

    init() {}

    init(_ effect: Effect) { self.effect = effect }
}
