import AccessoryKit
import BlueZ
import Configuration
import HomeAssistant
import Telemetry

/// A source of sightings: the box's own Bluetooth adapter, a `bluez` entry of `gateways:`.
/// ``BlueZClient`` hears BlueZ over D-Bus on its own thread and posts what it hears and where
/// it stands to this component's mailbox; here each advertisement goes to Ingest through the
/// context, as an MQTT gateway's does, and the gateway's figures, its scanning mode and its
/// faults (each with its remedy) go on the board every source shares (`bridge/gateways`).
///
/// The entry's name is its one heard gateway's: the node `rooms:` names, the `gateway` of an
/// accessory's state. It hears only what that one adapter hears, in the one room it is in.
final class BlueZSource: RuntimeComponent {
    private let entry: Int
    private let gateway: GatewayConfiguration
    private let board: GatewayBoard
    private let busAddress: String?
    private var client: BlueZClient?
    private var state: BlueZState?
    /// How long a stop waits for the D-Bus thread (a call to BlueZ under way takes at most 2 s).
    static let stopBound = Duration.seconds(3)

    /// - Parameter entry: the entry's index in `gateways:` (the board's entry).
    init(entry: Int, configuration: BridgeConfiguration, board: GatewayBoard) {
        self.entry = entry
        gateway = configuration.gateways[entry]
        self.board = board
        busAddress = configuration.systemBusAddress
    }

    func start(_ context: ComponentContext) async {
        let mailbox = context.mailbox
        let settings = BlueZClient.Settings(
            gateway: gateway.name, adapter: gateway.adapter, passive: gateway.scanning == .passive, busAddress: busAddress)
        let client = BlueZClient(settings: settings) { mailbox.post($0) }
        self.client = client
        client.start()
    }

    func handle(event: any Sendable, _ context: ComponentContext) async {
        guard let event = event as? BlueZEvent else { return }
        let now = context.now()
        switch event {
        case .heard(var advertisement):
            advertisement.receivedAt = now.milliseconds
            await take(advertisement, at: now, context)
        case .state(let state):
            changed(state, at: now, context)
        }
    }

    /// One advertisement: refused as the MQTT parsers refuse a proximity-pairing message no
    /// genuine accessory sends, else to Ingest; counted on the gateway either way.
    private func take(_ advertisement: Advertisement, at now: Timestamp, _ context: ComponentContext) async {
        let outcome: IngestOutcome
        do throws(TelemetryRejection) {
            try TelemetryParser.refuseMalformedProximityPairing(advertisement, field: "ManufacturerData")
            outcome = context.advertisement(advertisement, at: now)
        } catch {
            var rejection = error
            rejection.gateway = gateway.name
            outcome = context.refused(rejection, from: gateway.name)
        }
        await context.apply(outcome, at: now)
        let counted = board.tracker.advertisement(
            gateway.name, through: entry, withManufacturerData: !advertisement.manufacturerData.isEmpty, attributed: outcome.attributed,
            at: now)
        warn(counted.appeared, context)
        if counted.changed || board.tracker.problemsChanged { publishGateways(at: now, context) }
    }

    /// The client scans, or cannot: said once in the log, and on `bridge/gateways` until it changes.
    private func changed(_ state: BlueZState, at now: Timestamp, _ context: ComponentContext) {
        let before = self.state
        self.state = state
        let problem = Self.problem(state)
        let result = board.tracker.source(
            gateway.name, through: entry, online: state.mode != nil, problem: problem, scanning: state.mode?.rawValue, at: now)
        if let mode = state.mode {
            if before?.mode != mode || before?.adapter != state.adapter {
                context.logger.info(
                    "gateway \(gateway.name): scanning \(mode.rawValue == "active" ? "actively" : "passively") on \(state.adapter ?? "?")")
            }
            if state.passiveUnavailable { warn(result.appeared, context) }
        } else if let problem {
            // Each fault's own words (BlueZ's, libsystemd's) with the remedy; the client retries by itself.
            context.logger.warning("gateway \(gateway.name): \(state.detail ?? problem.rawValue): \(problem.message())")
        }
        if result.changed || board.tracker.problemsChanged { publishGateways(at: now, context) }
    }

    static func problem(_ state: BlueZState) -> GatewayProblem? {
        switch state.fault {
        case .noSystemBus?: .bluezNoSystemBus
        case .notRunning?: .bluezNotRunning
        case .noAdapter?: .bluezNoAdapter
        case .permissionDenied?: .bluezPermissionDenied
        case .adapterOff?: .bluezAdapterOff
        case nil: state.passiveUnavailable ? .bluezPassiveUnavailable : nil
        }
    }

    private func publishGateways(at now: Timestamp, _ context: ComponentContext) {
        context.publishBridge(context.topics.bridgeGateways, board.tracker.payload(at: now))
        context.discover(gateways: board.tracker.heardGateways.map { HomeAssistantGateway(entry: $0.entry, name: $0.name) })
        board.tracker.published()
    }

    private func warn(_ appeared: [GatewayTracker.Appeared], _ context: ComponentContext) {
        for problem in appeared { context.logger.warning("gateway \(problem.gateway): \(problem.message)") }
    }

    /// The D-Bus thread stops within ``stopBound`` or is left behind: a stop always ends.
    func stop(_ context: ComponentContext) async {
        guard let client else { return }
        self.client = nil
        let inTime = await Deadline.run(Self.stopBound) { await client.stop() }
        if !inTime { context.logger.warning("gateway \(gateway.name): the D-Bus thread did not stop within 3 s; stopping without it") }
    }
}
