import AccessoryKit
import Configuration
import HomeAssistant
import JSON
import MQTT
import Telemetry

/// The first stage: turns each incoming message into engine input.
///
/// It owns everything needed to understand a message before the engine sees it: the topic
/// routes (classified once, by ``TopicRouter``), the gateway parsers, the resolution of
/// private addresses to identities, the placement decoders of the products, and the gateways
/// heard so far. What the engine knows (which product each accessory is, its keys, where it
/// was followed to, whether the picker is presented) it reads through ``EngineView``, never
/// from a copy. It never changes the engine, storage or the network; ``BridgeRuntime`` hands
/// its ``IngestOutcome`` on.
struct Ingest {
    let router: TopicRouter
    private let engine: EngineView
    /// Resolves private addresses with the accessories' IRKs (and remembers the answers);
    /// built again when the engine's keys change (``applied(_:)``).
    private var resolver: AddressResolver<BluetoothAddress>
    /// Follows rotations of accessories without an IRK, when `identity.follow` is on.
    private var follower: RotationFollower
    private let follows: Bool
    private let decoders: [String: PlacementDecoder]
    private let hardware: [String: HardwareType]
    /// The configured gateway entries and the gateways heard through each (`bridge/gateways`).
    private(set) var gateways: GatewayTracker
    /// Proximity-pairing model identifiers already logged as unknown (at most ``unknownModelsKept``).
    private var unknownModels: Set<UInt16> = []
    private static let unknownModelsKept = 64
    /// Recognises Home Assistant's birth message, when discovery is enabled.
    private let homeAssistant: HomeAssistantDiscovery?

    /// - Parameter homeAssistant: discovery, when `homeassistant.enabled` (its birth message).
    init(configuration: BridgeConfiguration, router: TopicRouter, engine: EngineView, homeAssistant: HomeAssistantDiscovery?) {
        self.router = router
        self.engine = engine
        gateways = GatewayTracker(configuration: configuration)
        resolver = AddressResolver(keys: Self.irks(engine.keys))
        follower = RotationFollower(availabilityMilliseconds: configuration.switching.availabilityTimeoutSeconds * 1000)
        follows = configuration.identity.follow
        decoders = Dictionary(configuration.products.map { ($0.name, $0.placementDecoder) }, uniquingKeysWith: { first, _ in first })
        hardware = Dictionary(configuration.products.map { ($0.name, $0.product.hardware) }, uniquingKeysWith: { first, _ in first })
        self.homeAssistant = homeAssistant
    }

    /// What an engine step changed that Ingest's own state follows: the resolver takes new
    /// keys (which forgets its cache), and an accessory removed, or given an IRK, is no longer
    /// followed.
    mutating func applied(_ outputs: [EngineOutput]) {
        var keysChanged = false
        for output in outputs {
            switch output {
            case .accessoryRemoved(let id):
                follower.forget(id)
                if resolver.keys.contains(where: { $0.0 == id }) { keysChanged = true }
            case .keysChanged(let id, let new):
                keysChanged = true
                // With an IRK its addresses are resolved, not followed.
                if new.irk != nil { follower.forget(id) }
            default: break
            }
        }
        if keysChanged { resolver.keys = Self.irks(engine.keys) }
    }

    /// The IRKs among `keys`, in a stable order.
    private static func irks(_ keys: [BluetoothAddress: AccessoryKeys]) -> [(BluetoothAddress, IdentityResolvingKey)] {
        keys.sorted { $0.key < $1.key }.compactMap { id, keys in
            keys.irk.flatMap { IdentityResolvingKey(bytes: $0.bytes) }.map { (id, $0) }
        }
    }

    /// Decides what one message is and what it asks for. Nothing here throws: malformed
    /// input becomes a rejection or an error for the accessory it names.
    mutating func ingest(_ message: MQTTMessage, route: IngestRoute, at now: Timestamp) -> IngestOutcome {
        switch route {
        case .request(let name):
            if message.retain { return refusedRetained(message.topic) }
            return IngestOutcome(.request(Self.request(name: name, payload: message.payload)))
        case .set(let id):
            if message.retain { return refusedRetained(message.topic) }
            return set(id: id, payload: message.payload, at: now)
        case .homeAssistantStatus:
            guard let homeAssistant, homeAssistant.isBirthMessage(message.payload) else { return IngestOutcome() }
            return IngestOutcome(.homeAssistantBirth)
        case .gateway(let index, _):
            return telemetry(message, parser: router.parsers[index], entry: index, at: now)
        case .unrouted, .pairing, .cluster:
            // A component's topics go to the component (BridgeRuntime), never here.
            return IngestOutcome()
        }
    }

    /// A retained request would be carried out again after every reconnect (and by every
    /// restart): refuse it, and say how to clear it.
    private func refusedRetained(_ topic: String) -> IngestOutcome {
        var outcome = IngestOutcome()
        outcome.notice = (.warning, Self.retainedRefusal(topic))
        return outcome
    }

    /// The warning for a retained request (also the pairing form's, for its topic).
    static func retainedRefusal(_ topic: String) -> String {
        "ignored a retained message on \(topic): publish requests without retain (clear it with: mosquitto_pub -r -n -t '\(topic)')"
    }

    static func request(name: String, payload: [UInt8]) -> IncomingRequest {
        let control = RequestDecoder.isAccessoryControl(name)
        let parsed: JSONValue
        do {
            parsed = try JSONParser.parse(payload)
        } catch {
            return IncomingRequest(
                name: name, transaction: nil,
                decoded: .failure(
                    .invalidRequest("the payload is not JSON: \(error.description)", accessoryControl: control)))
        }
        return IncomingRequest(
            name: name, transaction: parsed["transaction"],
            decoded: RequestDecoder.decode(name: name, payload: parsed))
    }

    /// `accessory/<ID>/set`: the extension role. Same update rules as native telemetry; a
    /// container-role operation (register) here is refused by the engine with `invalidRequest`.
    private func set(id text: Substring, payload: [UInt8], at now: Timestamp) -> IngestOutcome {
        guard let id = BluetoothAddress(text).flatMap(engine.accessory(idOrAlias:)) else {
            var outcome = IngestOutcome()
            outcome.rejection = ("set", "accessory/\(text)/set names no known accessory")
            return outcome
        }
        switch AccessoryReportParser.parseUpdate(payload, accessory: id) {
        case .success(.report(let report)):
            return IngestOutcome(.telemetry(.report(report), context: "set", refresh: nil))
        case .success(.register):
            // The engine refuses it and emits the accessory error itself among the outputs.
            return IngestOutcome(
                .telemetry(
                    .request(.register(id, RegistrationRequest(capabilities: [])), role: .extension), context: "set", refresh: nil))
        case .failure(let rejection):
            return invalidUpdate(id, rejection: rejection, source: "set")
        }
    }

    private mutating func telemetry(_ message: MQTTMessage, parser: TelemetryParser, entry: Int, at now: Timestamp) -> IngestOutcome {
        switch parser.parse(topic: message.topic, payload: message.payload, receivedAt: now.milliseconds) {
        case .advertisement(let advertisement):
            var outcome = IngestOutcome()
            var attributed = attribute(advertisement, at: now, outcome: &outcome)
            // With an encryption key the end of the proximity payload must decrypt consistently
            // (identity.md, Keys); a rotating address whose payload does not is not this
            // accessory's. Its own address stays its own, with the clear 10 % levels.
            var decrypted: Battery?
            if let key = attributed.advertiser?.keys.encryptionKey, let pairing = advertisement.appleProximityPairing,
                pairing.encryptedPayload != nil
            {
                // Laid out as the model's batteries are: a single battery is the broadcasting side's.
                let status = pairing.decrypted(with: key)
                decrypted = status?.battery(pairing.knownModel?.batteries ?? .pods)
                if status == nil && attributed.how != .address {
                    let address = advertisement.address
                    attributed = Attribution(address, .address, engine.advertiser(address))
                }
            }
            let (identity, attribution) = (attributed.id, attributed.how)
            let product = attributed.advertiser?.product
            let decoder = product.flatMap { decoders[$0] } ?? .none
            var sighting = advertisement.sighting(identity: identity, decoder: decoder, hardware: product.flatMap { hardware[$0] })
            if decoder == .appleProximity, sighting.decoded != nil, sighting.decoded?.model == nil {
                noteUnknownModel(of: identity, advertisement: advertisement, outcome: &outcome)
            }
            sighting.heardFrom = advertisement.address
            sighting.attribution = attribution
            if let battery = decrypted, sighting.decoded != nil { sighting.decoded?.battery = battery }
            if product != nil {
                readFastPair(advertisement, of: identity, into: &sighting, outcome: &outcome)
            } else if engine.isPickerPresented, let model = advertisement.appleProximityPairing?.modelName {
                // A candidate of the shipped "AirPods or Beats" is shown as what it is.
                sighting.decoded = AdvertisementSighting.Decoded(model: model)
            }
            outcome.effect = .telemetry(.sighting(sighting), context: "sighting", refresh: identity)
            outcome.gatewaysChanged = gateways.seen(advertisement.gateway, through: entry, at: now)
            return outcome
        case .report(let report):
            var outcome = IngestOutcome()
            if let gateway = report.gateway { outcome.gatewaysChanged = gateways.seen(gateway, through: entry, at: now) }
            // A report names the accessory by its id, or by its alias (its public address).
            guard let id = engine.accessory(idOrAlias: report.accessory) else {
                outcome.rejection = (report.gateway ?? parser.name, "telemetry for unknown accessory \(report.accessory)")
                return outcome
            }
            let attributed = AccessoryReport(accessory: id, gateway: report.gateway, changes: report.changes)
            outcome.effect = .telemetry(.report(attributed), context: "telemetry", refresh: id)
            return outcome
        case .gatewayStatus(let status):
            var outcome = IngestOutcome()
            if gateways.status(status.gateway, through: entry, online: status.state == .online, at: now) {
                outcome.gatewaysChanged = true
                outcome.notice = (.info, "gateway \(status.gateway) is \(status.state.rawValue)")
            }
            return outcome
        case .trackerOffline, .ignored:
            return IngestOutcome()
        case .rejected(let rejection):
            if let accessory = rejection.accessory.flatMap(engine.accessory(idOrAlias:)) {
                return invalidUpdate(accessory, rejection: rejection, source: rejection.gateway ?? parser.name)
            }
            var outcome = IngestOutcome()
            outcome.rejection = (rejection.gateway ?? parser.name, rejection.description)
            return outcome
        }
    }

    /// A proximity-pairing model the catalogue does not know decodes with `model: null`; its raw
    /// identifier goes to the debug log once per identifier (a bounded set), so a user can
    /// report it without the log repeating it on every advertisement.
    private mutating func noteUnknownModel(of id: BluetoothAddress, advertisement: Advertisement, outcome: inout IngestOutcome) {
        guard let model = advertisement.appleProximityPairing?.model, unknownModels.count < Self.unknownModelsKept,
            unknownModels.insert(model).inserted
        else { return }
        let raw = advertisement.manufacturer.map { Hex.encode($0.payload) } ?? ""
        outcome.notice = (
            .debug,
            "accessory \(id) advertises Apple model 0x\(String(model, radix: 16, uppercase: true)), which the catalogue does not know: "
                + "model null, worn read from the earbuds' bits (manufacturer data \(raw))"
        )
    }

    /// A known accessory's Fast Pair battery notification (service data 0xFE2C), whatever its
    /// product's placement decoder: a Fast Pair product has no wear state, so it is configured
    /// with `placement_decoder: none` and its battery comes from here (docs/telemetry.md). The
    /// product's own decoder speaks first: its battery, when it read one, is kept. Never a
    /// placement. Service data in a layout ``FastPairAdvertisement`` does not know is ignored
    /// and reported in the outcome (counted, not a rejection: the sighting itself is fine and
    /// still counts for presence). Unknown advertisers are not read: nobody's battery is
    /// published for them, and their payloads would only make the count noise.
    private func readFastPair(
        _ advertisement: Advertisement, of identity: BluetoothAddress, into sighting: inout AdvertisementSighting,
        outcome: inout IngestOutcome
    ) {
        guard let data = advertisement.serviceData(for: FastPairAdvertisement.serviceUUID) else { return }
        let battery: Battery
        do throws(FastPairAdvertisement.UnknownLayout) {
            guard let read = try FastPairAdvertisement(serviceData: data).battery?.battery else { return }
            battery = read
        } catch {
            outcome.fastPairIgnored = (identity, error, data)
            return
        }
        if sighting.decoded == nil {
            sighting.decoded = AdvertisementSighting.Decoded(battery: battery)
        } else if sighting.decoded?.battery == nil {
            sighting.decoded?.battery = battery
        }
    }

    /// Which accessory an advertisement counts for, and how that was found: its IRK resolves
    /// the address; the address is one the accessory was followed to; it is the accessory's
    /// own; or (for proximity pairing) the follower recognises a rotation now. Otherwise the
    /// address stands for itself (a picker candidate, or nobody).
    /// - Returns: the accessory (or the address itself), how it was found, and the accessory's
    ///   product and keys when it is a known one (looked up once for the whole message).
    private mutating func attribute(
        _ advertisement: Advertisement, at now: Timestamp, outcome: inout IngestOutcome
    ) -> Attribution {
        let address = advertisement.address
        if let id = resolver.resolve(address) { return Attribution(id, .irk, engine.advertiser(id)) }
        var known: Attribution?
        if let id = engine.accessory(followedTo: address) {
            known = Attribution(id, .followed, engine.advertiser(id))
        } else if let advertiser = engine.advertiser(address) {
            known = Attribution(address, .address, advertiser)
        }
        // The follower is mutated in place (a local copy would copy its tables on every sighting).
        guard follows, follower.isTracking || known != nil, let pairing = advertisement.appleProximityPairing else {
            return known ?? Attribution(address, .address, nil)
        }
        if let known {
            if known.advertiser?.keys.irk == nil {
                follower.heard(known.id, at: address, profile: .init(pairing), gateway: advertisement.gateway, now: now)
            }
            return known
        }
        switch follower.unknown(address, profile: .init(pairing), gateway: advertisement.gateway, now: now) {
        case .follow(let id):
            // The engine records the new address when it takes the sighting.
            let previous = engine.followedAddress(of: id) ?? id
            outcome.notice = (.info, "followed accessory \(id) from \(previous) to \(address) (no IRK: same model, colour and battery)")
            return Attribution(id, .followed, engine.advertiser(id))
        case .ambiguous(let message):
            outcome.notice = (.warning, message)
        case .none:
            break
        }
        return Attribution(address, .address, nil)
    }

    /// Who an advertisement counts for (``attribute(_:at:outcome:)``).
    private struct Attribution {
        var id: BluetoothAddress
        var how: IdentityAttribution
        /// The known accessory's product and keys (nil: the address is nobody's).
        var advertiser: (product: String, keys: AccessoryKeys)?

        init(_ id: BluetoothAddress, _ how: IdentityAttribution, _ advertiser: (product: String, keys: AccessoryKeys)?) {
            self.id = id
            self.how = how
            self.advertiser = advertiser
        }
    }

    /// Invalid content for a known accessory: an `invalidRequest` update error (through the
    /// engine, so `last_error` in the state shows it too), and no other state change. Like any
    /// rejected telemetry it is counted and logged (a warning, at most once a minute per
    /// `source`: the gateway's name, or `set`).
    private func invalidUpdate(_ id: BluetoothAddress, rejection: TelemetryRejection, source: String) -> IngestOutcome {
        let field = rejection.field ?? "payload"
        let report = AccessoryReport(accessory: id, gateway: nil, changes: [.invalid(field: field, message: rejection.message)])
        var outcome = IngestOutcome(.telemetry(.report(report), context: "telemetry", refresh: nil))
        outcome.rejection = (source, "invalid content for accessory \(id): \(field): \(rejection.message)")
        return outcome
    }
}
