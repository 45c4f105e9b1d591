import AccessoryKit
import Configuration
import HomeAssistant
import JSON
import MQTT
import Telemetry

/// The first stage: turns what a source heard (an advertisement, a report), a request and a
/// `/set` update into engine input.
///
/// It owns everything needed to understand them before the engine sees them: the resolution
/// of private addresses to identities, the rotation follower, the look-alikes' attribution,
/// and the placement decoders of the products. What the engine knows (which product each
/// accessory is, its keys, where it was followed to, whether the picker is presented) it reads
/// through ``EngineView``, never from a copy. It never changes the engine, storage or the
/// network: it returns an ``IngestOutcome``, whose actions ``RuntimeStages`` applies. The
/// sources (``MQTTGatewaySource``) parse what they hear and keep their gateways' figures.
struct Ingest {
    private let engine: EngineView
    /// Resolves private addresses with the accessories' IRKs (and remembers the answers), an
    /// IRK whose byte order is not known yet in both orders; built again when the engine's keys
    /// change (``applied(_:)``).
    private var resolver: AddressResolver<ResolvedKey>
    /// Addresses that could be accessories found again after being away (`bridge/lookalikes`,
    /// published by ``LookalikesComponent``).
    let lookalikes: LookalikeBoard
    /// Unattributed resolvable addresses heard lately advertising proximity pairing, for the
    /// byte order of a key given now.
    private var recentAddresses = RecentAddresses()
    /// Automatic re-attachments on trial for the look-alike window.
    private var probation: ReattachProbation
    /// Follows rotations of accessories without an IRK, when `identity.follow` is on.
    private var follower: RotationFollower
    private let follows: Bool
    private let decoders: [String: PlacementDecoder]
    private let hardware: [String: HardwareType]
    /// Proximity-pairing model identifiers already logged as unknown (at most ``unknownModelsKept``).
    private var unknownModels: Set<UInt16> = []
    private static let unknownModelsKept = 64

    /// - Parameter lookalikes: the look-alikes, shared with what publishes them (a new board
    ///   by default).
    init(configuration: BridgeConfiguration, engine: EngineView, lookalikes: LookalikeBoard? = nil) {
        self.engine = engine
        resolver = AddressResolver(keys: Self.irks(engine.keys))
        self.lookalikes =
            lookalikes
            ?? LookalikeBoard(
                LookalikeTracker(mode: configuration.identity.reattach, windowSeconds: configuration.identity.lookalikeWindowSeconds))
        probation = ReattachProbation(windowMilliseconds: self.lookalikes.tracker.windowMilliseconds)
        follower = RotationFollower(availabilityMilliseconds: configuration.switching.availabilityTimeoutSeconds * 1000)
        follows = configuration.identity.follow
        decoders = Dictionary(configuration.products.map { ($0.name, $0.placementDecoder) }, uniquingKeysWith: { first, _ in first })
        hardware = Dictionary(configuration.products.map { ($0.name, $0.product.hardware) }, uniquingKeysWith: { first, _ in first })
    }

    /// An accessory's IRK in one byte order, as the resolver knows it.
    struct ResolvedKey: Hashable, Sendable {
        var id: BluetoothAddress
        var order: IRKOrder
    }

    /// What an engine step changed that Ingest's own state follows: the resolver takes new
    /// keys (which forgets its cache); an accessory removed, or given an IRK, is no longer
    /// followed; one just paired is followed from its pairing sighting; an address re-attached
    /// is no longer a look-alike.
    mutating func applied(_ outputs: [EngineOutput]) {
        var keysChanged = false
        for output in outputs {
            switch output {
            case .accessoryRemoved(let id):
                follower.forget(id)
                probation.ended(id)
                if resolver.keys.contains(where: { $0.identity.id == id }) { keysChanged = true }
            case .keysChanged(let id, let new):
                keysChanged = true
                // With an IRK its addresses are resolved, not followed.
                if new.irk != nil {
                    follower.forget(id)
                    probation.ended(id)
                }
            case .event(let event) where event.type == .accessoryAdded:
                if let id = event.accessory?.id { follower.adopt(id) }
            case .event(let event) where event.type == .accessoryReattached:
                if let address = event.accessory.flatMap({ engine.followedAddress(of: $0.id) }) { lookalikes.tracker.forget(address) }
            default: break
            }
        }
        if keysChanged { resolver.keys = Self.irks(engine.keys) }
    }

    /// The IRKs among `keys`, in a stable order, each in the orders still possible.
    private static func irks(_ keys: [BluetoothAddress: AccessoryKeys]) -> [(ResolvedKey, IdentityResolvingKey)] {
        keys.sorted { $0.key < $1.key }.flatMap { id, keys in
            keys.irkCandidates.compactMap { order, bytes in
                IdentityResolvingKey(bytes: bytes).map { (ResolvedKey(id: id, order: order), $0) }
            }
        }
    }

    /// A request with what only Ingest knows: a key in hex gets the byte order that resolves
    /// one of the addresses heard lately (``RecentAddresses``); `accessory/reattach` is refused
    /// for an address that is someone else's.
    mutating func prepare(_ request: Request, at now: Timestamp) -> Result<Request, ResponseError> {
        switch request {
        case .setKeys(let id, .set(let irk), let encryptionKey, nil) where irk.isHexText:
            let order = recentAddresses.order(of: irk, model: engine.trace(of: id).profile?.model, at: now)
            return .success(.setKeys(id, irk: .set(irk), encryptionKey: encryptionKey, irkOrder: order))
        case .selectCandidate(let id, let name, var keys, let sources) where keys.irk?.isHexText == true && keys.irkOrder == .notYet:
            // The candidate's own address first: it is the one it was heard from.
            if let irk = keys.irk {
                keys.irkOrder =
                    IRKOrder.notYet.candidates(irk.bytes).first { IdentityResolvingKey(bytes: $0.bytes)?.resolves(id) == true }?.order
                    ?? recentAddresses.order(of: irk, model: engine.candidateProfile(id)?.model, at: now) ?? .notYet
            }
            return .success(.selectCandidate(id, name: name, keys: keys, sources: sources))
        case .reattach(let id, let address):
            let refuse = { (message: String) in Result<Request, ResponseError>.failure(.invalidRequest(message, accessoryControl: false)) }
            if address == id { return refuse("'address': \(address) is the accessory's own id") }
            if engine.knows(address) { return refuse("'address': \(address) is the id of another accessory") }
            if let other = engine.accessory(followedTo: address), other != id {
                return refuse("'address': \(address) is the address accessory \(other) advertises from now")
            }
            if let owner = engine.accessory(aliasedTo: address), owner != id {
                return refuse("'address': \(address) is the alias of accessory \(owner)")
            }
            let resolved = resolver.resolve(address)?.id
            if let resolved, resolved != id { return refuse("'address': \(address) resolves with the IRK of accessory \(resolved)") }
            if engine.advertiser(id)?.keys.irk != nil && resolved != id {
                return refuse("'address': accessory \(id) has an IRK, and it does not resolve \(address)")
            }
            // What a person chose stands: no trial, no hold.
            probation.ended(id)
            return .success(request)
        default:
            return .success(request)
        }
    }

    /// A request or a `/set` update: what it asks for. Nothing here throws: malformed input
    /// becomes a refusal or an error for the accessory it names. (A component's topics go to
    /// the component, never here.)
    func ingest(_ message: MQTTMessage, route: IngestRoute, at now: Timestamp) -> IngestOutcome {
        switch route {
        case .request(let name):
            if message.retain { return IngestOutcome(.log(.warning, Self.retainedRefusal(message.topic))) }
            return IngestOutcome(.request(Self.request(name: name, payload: message.payload)))
        case .set(let id):
            if message.retain { return IngestOutcome(.log(.warning, Self.retainedRefusal(message.topic))) }
            return set(id: id, payload: message.payload, at: now)
        case .claimed, .unrouted:
            return IngestOutcome()
        }
    }

    /// The warning for a retained request (also the pairing form's, for its topic).
    static func retainedRefusal(_ topic: String) -> String {
        let topic = KeyedTopic.redacted(topic)
        return "ignored a retained message on \(topic): publish requests without retain (clear it with: mosquitto_pub -r -n -t '\(topic)')"
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
            return IngestOutcome(
                .refuse(
                    TelemetryRefusal(gateway: "set", reason: .unknownAccessory, message: "accessory/\(text)/set names no known accessory")))
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

    /// An advertisement a source heard: whose it is, and the sighting for the engine (none for
    /// nobody's while no picker is presented: the engine would drop it). The outcome says
    /// whether it counted for a known accessory (the gateway's figures).
    mutating func advertisement(_ advertisement: Advertisement, at now: Timestamp) -> IngestOutcome {
        var outcome = IngestOutcome()
        // Decoded once: attribution, the encrypted payload and the profile all read it.
        let pairing = advertisement.appleProximityPairing
        var attributed = attribute(advertisement, pairing: pairing, at: now, outcome: &outcome)
        // Nobody's, and no picker to offer it in: the engine would drop the sighting
        // (`BridgeEngine.observe`), so it is not built, and only the gateway's figures count it.
        // Most of what gateways hear is this (every phone, watch and laptop nearby).
        if attributed.advertiser == nil, !engine.isPickerPresented { return outcome }
        // With an encryption key the end of the proximity payload must decrypt consistently
        // (identity.md, Keys); a rotating address whose payload does not is not this
        // accessory's. Its own address stays its own, with the clear 10 % levels.
        var decrypted: Battery?
        var correctedWorn: Bool?
        if let key = attributed.advertiser?.keys.encryptionKey, let pairing, pairing.encryptedPayload != nil {
            // Laid out as the model's batteries are: a single battery is the broadcasting side's.
            let status = pairing.decrypted(with: key)
            decrypted = status?.battery(pairing.knownModel?.batteries ?? .pods)
            // A replay of real encrypted bytes with the clear status changed to "in ear" is
            // caught here: the buds charge, so they are in their case.
            if pairing.knownModel?.wearSensor == .inEarBits {
                correctedWorn = status?.correctedWorn(leftInEar: pairing.leftInEar, rightInEar: pairing.rightInEar)
            }
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
        sighting.irkOrder = attributed.irkOrder
        sighting.profile = pairing.map { ProximityProfile(model: $0.model, colour: $0.colour) }
        if let battery = decrypted, sighting.decoded != nil { sighting.decoded?.battery = battery }
        if let worn = correctedWorn, let hardware = pairing?.knownModel?.hardware, sighting.decoded != nil {
            sighting.decoded?.worn = worn
            sighting.decoded?.placement = hardware.placement(worn: worn)
        }
        if product != nil {
            readFastPair(advertisement, of: identity, into: &sighting, outcome: &outcome)
        } else if engine.isPickerPresented, let pairing, pairing.modelName != nil {
            // A candidate of the shipped "AirPods or Beats" is shown as what it is, and what its
            // advertisement says is known from the pairing on (household.md).
            sighting.decoded =
                advertisement.sighting(identity: identity, decoder: .appleProximity, hardware: pairing.knownModel?.hardware)
                .decoded
        }
        outcome.append(.telemetry(.sighting(sighting), context: "sighting", refresh: identity, announcement: attributed.announcement))
        outcome.attributed = attributed.advertiser != nil
        return outcome
    }

    /// A report a source heard (a firmware relay's placement, batteries, connections): it
    /// names the accessory by its id, or by its alias (its public address).
    func report(_ report: AccessoryReport, from source: String) -> IngestOutcome {
        guard let id = engine.accessory(idOrAlias: report.accessory) else {
            return IngestOutcome(
                .refuse(
                    TelemetryRefusal(
                        gateway: report.gateway ?? source, reason: .unknownAccessory,
                        message: "telemetry for unknown accessory \(report.accessory)")))
        }
        let attributed = AccessoryReport(accessory: id, gateway: report.gateway, changes: report.changes)
        return IngestOutcome(.telemetry(.report(attributed), context: "telemetry", refresh: id))
    }

    /// Telemetry a source's parser refused: an error for the accessory it names when that is
    /// a known one, a refusal either way.
    func refused(_ rejection: TelemetryRejection, from source: String) -> IngestOutcome {
        if let accessory = rejection.accessory.flatMap(engine.accessory(idOrAlias:)) {
            return invalidUpdate(accessory, rejection: rejection, source: rejection.gateway ?? source)
        }
        return IngestOutcome(
            .refuse(TelemetryRefusal(gateway: rejection.gateway ?? source, reason: .parser(rejection.code), message: rejection.description))
        )
    }

    /// A proximity-pairing model the catalogue does not know decodes with `model: null`; its raw
    /// identifier goes to the debug log once per identifier (a bounded set), so a user can
    /// report it without the log repeating it on every advertisement.
    private mutating func noteUnknownModel(of id: BluetoothAddress, advertisement: Advertisement, outcome: inout IngestOutcome) {
        guard let model = advertisement.appleProximityPairing?.model, unknownModels.count < Self.unknownModelsKept,
            unknownModels.insert(model).inserted
        else { return }
        let raw = advertisement.manufacturer.map { Hex.encode($0.payload) } ?? ""
        outcome.append(
            .log(
                .debug,
                "accessory \(id) advertises Apple model 0x\(String(model, radix: 16, uppercase: true)), which the catalogue does not know: "
                    + "model null, worn read from the earbuds' bits (manufacturer data \(raw))"))
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
            outcome.append(.ignoreFastPair(identity, error, data: data))
            return
        }
        if sighting.decoded == nil {
            sighting.decoded = AdvertisementSighting.Decoded(battery: battery)
        } else if sighting.decoded?.battery == nil {
            sighting.decoded?.battery = battery
        }
    }

    /// Which accessory an advertisement counts for, and how that was found: its IRK resolves
    /// the address (an IRK whose byte order is not known yet only from an advertisement of the
    /// accessory's model, which then decides the order); the address is one the accessory was
    /// followed or re-attached to; it is the accessory's own; or (for proximity pairing) the
    /// follower recognises a rotation now, or the address is a look-alike the rules re-attach
    /// to an accessory that was away. Otherwise the address stands for itself (a picker
    /// candidate, a look-alike offered, or nobody).
    /// - Returns: the accessory (or the address itself), how it was found, and the accessory's
    ///   product and keys when it is a known one (looked up once for the whole message).
    private mutating func attribute(
        _ advertisement: Advertisement, pairing: ProximityPairing?, at now: Timestamp, outcome: inout IngestOutcome
    ) -> Attribution {
        let address = advertisement.address
        // ESPresense resolved the address itself with a key in its known_irks, and says which.
        if let key = advertisement.knownIRK, let id = accessory(withIRK: key) {
            lookalikes.tracker.forget(address)
            return Attribution(id, .irk, engine.advertiser(id))
        }
        if let resolved = resolver.resolve(address), let attributed = irkAttribution(resolved, advertisement, pairing: pairing) {
            lookalikes.tracker.forget(address)
            return attributed
        }
        var known: Attribution?
        if let id = engine.accessory(followedTo: address) {
            known = Attribution(id, engine.followedAttribution(of: id), engine.advertiser(id))
        } else if let advertiser = engine.advertiser(address) {
            known = Attribution(address, .address, advertiser)
        }
        guard let pairing else { return known ?? Attribution(address, .address, nil) }
        if let known {
            // The follower is mutated in place (a local copy would copy its tables on every sighting).
            if follows, known.advertiser?.keys.irk == nil {
                follower.heard(known.id, at: address, profile: .init(pairing), gateway: advertisement.gateway, now: now)
            }
            lookalikes.tracker.forget(address)
            return known
        }
        // A picker candidate is remembered too: paired, it is followed from its first sighting.
        if follows, follower.isTracking || engine.isPickerPresented {
            let profile = RotationFollower.Profile(pairing)
            let board = lookalikes
            // A fresh address that could be a tracked accessory's counts towards its gateway's
            // decoys, as a look-alike does.
            if !follower.isCandidate(address), follower.fitsTrack(profile) {
                noteFresh(address, gateway: advertisement.gateway, at: now, outcome: &outcome)
            }
            let decision = follower.unknown(address, profile: profile, gateway: advertisement.gateway, now: now) { heardOnce, gateways in
                board.tracker.isDecoy(heardOnce: heardOnce, gateways: gateways, at: now)
            }
            switch decision {
            case .follow(let id):
                // The engine records the new address when it takes the sighting.
                let previous = engine.followedAddress(of: id) ?? id
                outcome.append(
                    .log(.info, "followed accessory \(id) from \(previous) to \(address) (no IRK: same model, colour and battery)"))
                return Attribution(id, .followed, engine.advertiser(id))
            case .ambiguous(let message):
                outcome.append(.log(.warning, message))
            case .none:
                break
            }
        }
        recentAddresses.note(address, model: pairing.model, at: now)
        if !probation.isEmpty { tryReattachments(address, pairing: pairing, advertisement: advertisement, at: now, outcome: &outcome) }
        if let (id, announcement) = lookalike(address, pairing: pairing, advertisement: advertisement, at: now, outcome: &outcome) {
            var attributed = Attribution(id, .reattached, engine.advertiser(id))
            attributed.announcement = announcement
            return attributed
        }
        return Attribution(address, .address, nil)
    }

    /// The accessory whose IRK is `key`, in either byte order (ESPresense prints the key in the
    /// order its `known_irks` was given).
    private func accessory(withIRK key: [UInt8]) -> BluetoothAddress? {
        let reversed = Array(key.reversed())
        return engine.keys.first { _, keys in keys.irk.map { $0.bytes == key || $0.bytes == reversed } ?? false }?.key
    }

    /// The accessory a resolved address counts for: an IRK whose order is known counts as it
    /// is; one in an order not confirmed yet only from an advertisement of the accessory's model
    /// when it is known to advertise one (Apple proximity pairing), from any otherwise (the
    /// sighting then says which order matched). The model may come from a variant without status
    /// that carries it in clear; the case's own frame carries none, so it counts only once the
    /// order is confirmed.
    private func irkAttribution(_ resolved: ResolvedKey, _ advertisement: Advertisement, pairing: ProximityPairing?) -> Attribution? {
        let advertiser = engine.advertiser(resolved.id)
        guard advertiser?.keys.irkOrder == .notYet else { return Attribution(resolved.id, .irk, advertiser) }
        if let model = engine.trace(of: resolved.id).profile?.model,
            (pairing?.model ?? advertisement.proximityPairingMessage?.model) != model
        {
            return nil
        }
        var attributed = Attribution(resolved.id, .irk, advertiser)
        attributed.irkOrder = resolved.order
        return attributed
    }

    /// A proximity-pairing advertisement from an address nobody has, that could be an away
    /// accessory: tracked as a look-alike, and the accessory it is re-attached to when the
    /// rules single one out (``LookalikeTracker``), with the line that says so.
    private mutating func lookalike(
        _ address: BluetoothAddress, pairing: ProximityPairing, advertisement: Advertisement, at now: Timestamp,
        outcome: inout IngestOutcome
    ) -> (BluetoothAddress, announcement: String)? {
        guard lookalikes.tracker.isLooking else { return nil }
        let profile = ProximityProfile(model: pairing.model, colour: pairing.colour)
        let away = engine.awayAccessories(matching: profile)
        guard !away.isEmpty else {
            lookalikes.tracker.forget(address)
            return nil
        }
        let probation = probation
        let decision = lookalikes.tracker.heard(
            address, profile: profile, gateway: advertisement.gateway, rssi: advertisement.rssi ?? 0, at: now, away: away
        ) { probation.isHeldBack($0, at: now) }
        switch decision {
        case .offered(let first):
            if first && lookalikes.admitsEvent(at: now) { outcome.append(.lookalikeHeard) }
            markFlood(advertisement.gateway, at: now, outcome: &outcome)
            return nil
        case .reattach(let id):
            self.probation.started(id, address: address, profile: profile, at: now)
            return (
                id,
                "re-attached accessory \(id) to \(address): an away \(pairing.modelName ?? "accessory") of that model and colour, "
                    + "last heard by \(advertisement.gateway), where this address was first heard (no IRK)"
            )
        }
    }

    /// An address nobody has, heard while automatic re-attachments are on trial: a rival of
    /// one of them undoes it (``ReattachProbation``), with the `bridge/log` line that says why.
    private mutating func tryReattachments(
        _ address: BluetoothAddress, pairing: ProximityPairing, advertisement: Advertisement, at now: Timestamp,
        outcome: inout IngestOutcome
    ) {
        let engine = engine
        let verdict = probation.heard(
            address, profile: ProximityProfile(model: pairing.model, colour: pairing.colour), at: now,
            holds: { id, attached in engine.followedAddress(of: id) == attached && engine.followedAttribution(of: id) == .reattached }
        ) { id in
            engine.advertiser(id)?.keys.encryptionKey.map { pairing.decrypted(with: $0) != nil }
        }
        guard case .undo(let id, let attached, let rival, let proven) = verdict else { return }
        let why =
            proven
            ? "\(rival), whose payload decrypts with its encryption key, was heard by \(advertisement.gateway)"
            : "\(rival), another address of its model and colour, keeps advertising (heard by \(advertisement.gateway))"
        outcome.append(
            .telemetry(
                .undoReattach(id, from: attached), context: "identity", refresh: nil,
                announcement: "undid the automatic re-attachment of accessory \(id) to \(attached): \(why); it is away again, "
                    + "both addresses are offered on bridge/lookalikes (\(RequestName.reattach.name))"))
    }

    /// A fresh address with a tracked accessory's profile, counted for its gateway's decoys.
    private func noteFresh(_ address: BluetoothAddress, gateway: String, at now: Timestamp, outcome: inout IngestOutcome) {
        lookalikes.tracker.noteFresh(address, gateway: gateway, at: now)
        markFlood(gateway, at: now, outcome: &outcome)
    }

    /// A gateway flooding with fresh addresses has the problem `lookalike_flood` for the window.
    private func markFlood(_ gateway: String, at now: Timestamp, outcome: inout IngestOutcome) {
        if lookalikes.tracker.isFlooding(gateway, at: now) {
            outcome.lookalikeFloodUntil = now.advanced(byMilliseconds: lookalikes.tracker.windowMilliseconds)
        }
    }

    /// Who an advertisement counts for (``attribute(_:pairing:at:outcome:)``).
    private struct Attribution {
        var id: BluetoothAddress
        var how: IdentityAttribution
        /// The known accessory's product and keys (nil: the address is nobody's).
        var advertiser: (product: String, keys: AccessoryKeys)?
        /// The byte order in which an IRK not matched before resolved the address.
        var irkOrder: IRKOrder?
        /// The line a re-attachment by the rules is announced with.
        var announcement: String?

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
        outcome.append(
            .refuse(
                TelemetryRefusal(
                    gateway: source, reason: .invalidContent, message: "invalid content for accessory \(id): \(field): \(rejection.message)"
                )))
        return outcome
    }
}
