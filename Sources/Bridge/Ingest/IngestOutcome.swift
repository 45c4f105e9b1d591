import AccessoryKit
import Telemetry

/// What ``Ingest`` decided one message amounts to: the actions the loop applies, in order
/// (``RuntimeStages/apply(_:at:)``), as swift-kafka-client's state machines return actions
/// instead of setting flags for their caller to unpack. The first action is stored inline:
/// most messages come to one action or none, and a gateway message makes an outcome every time.
struct IngestOutcome: Sequence {
    enum Action {
        /// Telemetry for the engine. `refresh`: the accessory whose retained state may be
        /// republished when it has not been for a while (a sighting that changed nothing);
        /// `announcement`: an info line said by the instance that takes it (a re-attachment).
        case telemetry(EngineInput, context: StaticString, refresh: BluetoothAddress?, announcement: String? = nil)
        /// A request, on the request path.
        case request(IncomingRequest)
        /// A line for the log (a rotation followed, a retained request refused, an unknown model).
        case log(BridgeLogger.Level, String)
        /// Counted in `telemetry_rejected` and logged at most once a minute per gateway. Invalid
        /// content for a known accessory is one too, and its error also reaches the accessory's
        /// error topic through the engine (``telemetry(_:context:refresh:announcement:)``).
        case refuse(TelemetryRefusal)
        /// Fast Pair service data of a known accessory in a layout the decoder does not know: the
        /// sighting went on without it. Counted in `fast_pair_ignored`, its bytes logged at debug
        /// level at most once a minute; not a refusal (a product may use the Fast Pair service
        /// UUID for data of its own, as the shipped example product does).
        case ignoreFastPair(BluetoothAddress, FastPairAdvertisement.UnknownLayout, data: [UInt8])
        /// A look-alike was listed for the first time: the `lookalike_heard` event goes out.
        case lookalikeHeard
    }

    private var first: Action?
    private var more: [Action] = []
    /// The advertisement counted for a known accessory (the gateway's `attributed` figure).
    var attributed = false
    /// The gateway that heard it produces many fresh look-alikes: it has the problem
    /// `lookalike_flood` until then.
    var lookalikeFloodUntil: Timestamp?

    init() {}

    init(_ action: Action) { first = action }

    mutating func append(_ action: Action) {
        if first == nil { first = action } else { more.append(action) }
    }

    var isEmpty: Bool { first == nil }

    /// Consuming: the loop iterates an outcome it owns, so the actions move into the iterator
    /// instead of being copied (each copy retained the sighting's arrays and strings).
    consuming func makeIterator() -> Iterator { Iterator(first: first, more: more.makeIterator()) }

    /// The inline action, then the rest: iterating allocates nothing.
    struct Iterator: IteratorProtocol {
        fileprivate var first: Action?
        fileprivate var more: IndexingIterator<[Action]>

        mutating func next() -> Action? {
            // Moved out, not copied and then cleared.
            if let action = first.take() { return action }
            return more.next()
        }
    }
}
