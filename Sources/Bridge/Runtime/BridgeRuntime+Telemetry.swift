import AccessoryKit
import JSON
import MQTT
import Telemetry

extension BridgeRuntime {
    /// Routes one incoming message: request, extension-role `/set`, Home Assistant status,
    /// or gateway telemetry. Nothing here throws: bad input is answered, counted or logged.
    func handle(_ message: MQTTMessage) {
        let isRequest = topics.requestName(in: message.topic) != nil
        if message.retain && (isRequest || topics.accessoryID(inSetTopic: message.topic) != nil) {
            // A retained request would be carried out again after every reconnect (and by
            // every restart): refuse it, and say how to clear it.
            logger.warning("ignored a retained message on \(message.topic): publish requests without retain "
                + "(clear it with: mosquitto_pub -r -n -t '\(message.topic)')")
            return
        }
        if let name = topics.requestName(in: message.topic) {
            handleRequest(name: name, payload: message.payload)
        } else if let id = topics.accessoryID(inSetTopic: message.topic) {
            handleSet(id: id, payload: message.payload)
        } else if let discovery = homeAssistant?.discovery, message.topic == discovery.statusTopic {
            // Home Assistant restarted: republish discovery and state after a short random
            // delay, so a house full of bridges does not answer its birth message at once.
            // Once per delay: every republish is about four messages per accessory, so a
            // client repeating the birth message must not multiply them.
            if discovery.isBirthMessage(message.payload), !republishScheduled {
                republishScheduled = true
                var generator = SystemRandomNumberGenerator()
                let delay = discovery.republishDelay(using: &generator)
                let sink = eventSink
                Task {
                    try? await Task.sleep(for: delay)
                    sink.yield(.republish)
                }
            }
        } else {
            handleTelemetry(message)
        }
    }

    /// `accessory/<ID>/set`: the extension role. Same update rules as native telemetry; a
    /// container-role operation (register) here is refused with `invalidRequest`.
    func handleSet(id text: Substring, payload: [UInt8]) {
        // Updates from accessory relays are telemetry too: shed with it when the broker is behind.
        if shedWhenBrokerIsBehind() { return }
        let now = clock()
        guard let id = AccessoryKit.BluetoothAddress(text), engine.status(of: id) != nil else {
            rejectTelemetry(gateway: "set", reason: "accessory/\(text)/set names no known accessory")
            return
        }
        if let parsed = try? JSONParser.parse(payload), parsed["capabilities"] != nil {
            // Registering is the container role's business (bridge/request/accessory/register).
            // The engine refuses it and emits the accessory error itself among the outputs.
            let step = engine.handle(.request(.register(id, RegistrationRequest(capabilities: [])), role: .extension), at: now)
            deferAndPublish(step.outputs, at: now, context: "set")
            return
        }
        switch AccessoryReportParser.parse(payload, accessory: Telemetry.BluetoothAddress(id), gateway: nil, receivedAt: now.milliseconds) {
        case .success(let report):
            let step = engine.handle(.report(AccessoryKit.AccessoryReport(report)), at: now)
            deferAndPublish(step.outputs, at: now, context: "set")
        case .failure(let rejection):
            invalidUpdate(id, rejection: rejection, at: now)
        }
    }

    func handleTelemetry(_ message: MQTTMessage) {
        guard let (parser, format) = parsers.first(where: { $0.parser.handles(topic: message.topic) }) else { return }
        if shedWhenBrokerIsBehind() { return }
        let now = clock()
        switch parser.parse(topic: message.topic, payload: message.payload, receivedAt: now.milliseconds) {
        case .advertisement(let advertisement):
            if gateways.seen(advertisement.gateway, format: format, at: now) { publishRetained(topics.bridgeGateways, gateways.payload) }
            let identity = resolveIdentity(AccessoryKit.BluetoothAddress(advertisement.address))
            let product = productOfAccessory[identity]
            let sighting = AdvertisementSighting(
                advertisement, identity: identity, decoder: product.flatMap { decoders[$0] } ?? .none,
                hardware: product.flatMap { hardware[$0] })
            let step = engine.handle(.sighting(sighting), at: now)
            if !step.outputs.isEmpty { deferAndPublish(step.outputs, at: now, context: "sighting") }
            refreshState(of: identity, at: now)
        case .report(let report):
            if let gateway = report.gateway, gateways.seen(gateway, format: format, at: now) {
                publishRetained(topics.bridgeGateways, gateways.payload)
            }
            let id = AccessoryKit.BluetoothAddress(report.accessory)
            guard engine.status(of: id) != nil else {
                rejectTelemetry(gateway: report.gateway ?? parser.name, reason: "telemetry for unknown accessory \(id)")
                return
            }
            let step = engine.handle(.report(AccessoryKit.AccessoryReport(report)), at: now)
            deferAndPublish(step.outputs, at: now, context: "telemetry")
            refreshState(of: id, at: now)
        case .gatewayStatus(let status):
            if gateways.status(status.gateway, format: format, online: status.state == .online, at: now) {
                publishRetained(topics.bridgeGateways, gateways.payload)
                logger.info("gateway \(status.gateway) is \(status.state.rawValue)")
            }
        case .trackerOffline, .ignored:
            break
        case .rejected(let rejection):
            if let accessory = rejection.accessory, engine.status(of: AccessoryKit.BluetoothAddress(accessory)) != nil {
                invalidUpdate(AccessoryKit.BluetoothAddress(accessory), rejection: rejection, at: now)
            } else {
                rejectTelemetry(gateway: rejection.gateway ?? parser.name, reason: rejection.description)
            }
        }
    }

    /// Invalid content for a known accessory: an `invalidRequest` update error (through the
    /// engine, so `last_error` in the state shows it too), and no other state change.
    func invalidUpdate(_ id: AccessoryKit.BluetoothAddress, rejection: TelemetryRejection, at now: Timestamp) {
        counters.telemetryRejected += 1
        let report = AccessoryKit.AccessoryReport(
            accessory: id, gateway: nil,
            changes: [.invalid(field: rejection.field ?? "payload", message: rejection.message)])
        let step = engine.handle(.report(report), at: now)
        deferAndPublish(step.outputs, at: now, context: "telemetry")
    }

    /// Counted, and logged at most once a minute per gateway.
    func rejectTelemetry(gateway: String, reason: String) {
        counters.telemetryRejected += 1
        let admission = rejectionLog.admit(gateway, now: clock().milliseconds)
        guard admission.admitted else { return }
        let suppressed = admission.suppressed > 0 ? " (\(admission.suppressed) more rejected since the last report)" : ""
        logger.warning("telemetry from gateway '\(gateway)' rejected: \(reason)\(suppressed)")
    }

    /// The identity address behind a resolvable private address, when a configured IRK
    /// resolves it; any other address is its own identity.
    func resolveIdentity(_ address: AccessoryKit.BluetoothAddress) -> AccessoryKit.BluetoothAddress {
        // Resolvable private addresses have 0b01 in the two most significant bits.
        guard !resolver.keys.isEmpty, (address.rawValue >> 46) & 0b11 == 0b01 else { return address }
        if let cached = resolvedAddresses[address.rawValue] { return cached ?? address }
        if resolvedAddresses.count >= 10_000 { resolvedAddresses.removeAll(keepingCapacity: true) }
        let identity = resolver.resolve(Telemetry.BluetoothAddress(address))
        resolvedAddresses[address.rawValue] = .some(identity)
        return identity ?? address
    }
}
