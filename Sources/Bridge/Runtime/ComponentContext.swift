import AccessoryKit
import Configuration
import HomeAssistant
import JSON
import MQTT
import Storage
import Telemetry

/// What a component is handed by the loop, and all it can reach of the rest of the bridge:
/// the engine (read), the clock and the log; publishing; engine work through the output step;
/// the request path and answers; what a source hears, for Ingest; its own mailbox; and the
/// few hooks some need (the storage of a cluster's takeover, the console's figures).
///
/// The stages behind it are private: a component cannot call into the loop, another
/// component or a stage except through these, and every engine step it causes goes through
/// the one output step (``RuntimeStages/perform(_:at:)``).
struct ComponentContext {
    private unowned let stages: RuntimeStages
    /// Posts this component's own events into the loop (handed back to it alone).
    let mailbox: ComponentMailbox

    init(stages: RuntimeStages, mailbox: ComponentMailbox) {
        self.stages = stages
        self.mailbox = mailbox
    }

    // MARK: - Reading

    /// The engine as it is now.
    var engine: EngineView { stages.engine }
    /// Engine time (never backwards).
    func now() -> Timestamp { stages.clock() }
    var logger: BridgeLogger { stages.logger }
    var topics: Topics { stages.topics }
    /// Whether the MQTT client is connected now.
    var isConnected: Bool { stages.connection.isConnected }
    /// Shutdown began.
    var isShuttingDown: Bool { stages.shuttingDown }
    /// Whether this instance acts for the bridge as a whole (a single bridge always; in a
    /// cluster the holder of partition 0).
    var ownsBridge: Bool { stages.ownership.ownsBridge }
    /// Whether this instance owns the accessory (a single bridge owns every one).
    func owns(_ id: BluetoothAddress) -> Bool { stages.ownership.owns(id) }

    // MARK: - Publishing (QoS 1, held until the first connection, mirrored to the console)

    /// A publication (an empty retained payload clears the topic).
    func publish(_ topic: String, _ payload: [UInt8], retain: Bool) { stages.publisher.publish(topic, payload, retain: retain) }

    /// A message of a stream whose late copies are worthless (head-tracking frames): QoS 0, not
    /// retained, dropped while disconnected.
    func publishTransient(_ topic: String, _ payload: [UInt8]) { stages.publisher.publishTransient(topic, payload) }

    /// A retained bridge topic, by the instance that publishes the bridge's (a single bridge
    /// always; in a cluster the holder of partition 0).
    func publishBridge(_ topic: String, _ payload: JSONValue) {
        guard stages.ownership.ownsBridge else { return }
        stages.publisher.publish(topic, payload.bytes, retain: true)
    }

    /// A retained topic of an accessory's, by its owner (nil: cleared).
    func publishAccessory(_ id: BluetoothAddress, _ topic: String, _ payload: JSONValue?) {
        guard stages.ownership.owns(id) else { return }
        stages.publisher.publish(topic, payload?.bytes ?? [], retain: true)
    }

    /// The heard gateways changed: Home Assistant's bridge device has a sensor for each.
    func discover(gateways: [HomeAssistantGateway]) { stages.publisher.discover(gateways: gateways) }

    /// The look-alikes each away accessory could be changed: Home Assistant's selects offer them.
    func discover(lookalikes: [BluetoothAddress: [BluetoothAddress]]) { stages.publisher.discover(lookalikes: lookalikes) }

    /// Every retained topic again, the other components' too (a takeover, Home Assistant's birth).
    func republishEverything() { stages.republishEverything() }

    // MARK: - Engine work and requests

    /// Engine work through the output step: its outputs are published and every component
    /// (this one too) sees them.
    @discardableResult
    func perform(_ work: RuntimeCore.Work) async -> RuntimeCore.Outcome { await stages.perform(work, at: stages.clock()) }

    /// A request on the request path (committed before it is answered, to `answer`).
    func handle(_ request: IncomingRequest, answer: RequestAnswer) async {
        await stages.handle(request, answer: answer, at: stages.clock())
    }

    /// Answers a form's press on `bridge/response/<name>` (and `bridge/last_response`).
    func respond(_ form: FormName, _ result: Result<JSONValue, ResponseError>, transaction: JSONValue?) {
        stages.respond(form.name, result, transaction: transaction, to: .mqtt)
    }

    // MARK: - Sources

    /// What Ingest made of something a source heard, carried out (in a cluster, by the
    /// instance that owns the accessory): the sighting through the output step, the refusals
    /// counted, the lines logged.
    /// Nothing to do for an empty outcome (nobody's advertisement): no async call for it.
    func apply(_ outcome: consuming IngestOutcome, at now: Timestamp) async {
        guard !outcome.isEmpty else { return }
        await stages.apply(outcome, at: now)
    }

    // MARK: - Hooks a few components need

    /// The deferred telemetry writes and the store, for a cluster's hand-overs and takeovers.
    var storage: ComponentStorage { ComponentStorage(core: stages.core, diagnostics: stages.diagnostics) }

    /// The bridge's own figures and state, for the console (`/metrics`, `/healthz`, `/events`).
    var observation: BridgeObservation { BridgeObservation(stages: stages) }
}

/// A source hands what it heard to the runtime's Ingest through its context.
extension ComponentContext: SightingIntake {
    func advertisement(_ advertisement: Advertisement, at now: Timestamp) -> IngestOutcome {
        stages.ingest.advertisement(advertisement, at: now)
    }

    func report(_ report: AccessoryReport, from source: String) -> IngestOutcome { stages.ingest.report(report, from: source) }

    func refused(_ rejection: TelemetryRejection, from source: String) -> IngestOutcome { stages.ingest.refused(rejection, from: source) }
}
