import AccessoryKit
import JSON

/// Builds the JSON payloads of mqtt-api.md from the engine's values. Key names and order
/// follow the contract exactly; addresses are written `A1:B2:C3:D4:E5:F6`.
public struct Payloads: Sendable {
    /// Names for source devices: the configuration's `sources:`, and those given at run time
    /// (`source/name`; the configuration's win).
    public var sourceNames: [BluetoothAddress: String]

    public init(sourceNames: [BluetoothAddress: String] = [:]) {
        self.sourceNames = sourceNames
    }

    public static func address(_ address: BluetoothAddress?) -> JSONValue {
        address.map { .string($0.description) } ?? .null
    }

    public func accessory(_ accessory: Accessory) -> JSONValue {
        [
            "id": .string(accessory.id.description),
            "name": .string(accessory.displayName),
            "product": .string(accessory.product),
            "state": .string(accessory.state.name),
        ]
    }

    public func configuration(_ configuration: AccessoryControlDevice.Configuration) -> JSONValue {
        [
            "capabilities": .array(configuration.deviceCapabilities.names.map(JSONValue.string)),
            "placement": .string(configuration.devicePlacement?.rawValue),
            "primary_source": Self.address(configuration.primaryAudioSourceDeviceIdentifier),
            "secondary_source": Self.address(configuration.secondaryAudioSourceDeviceIdentifier),
        ]
    }

    public func battery(_ battery: Battery?) -> JSONValue {
        guard let battery else { return .null }
        var pairs: [(String, JSONValue)] = []
        if let main = battery.main { pairs.append(("main", .int(main))) }
        if let left = battery.left { pairs.append(("left", .int(left))) }
        if let right = battery.right { pairs.append(("right", .int(right))) }
        if let chargingCase = battery.chargingCase { pairs.append(("case", .int(chargingCase))) }
        // The charging flags the telemetry said, each after the levels (household.md).
        if let charging = battery.charging { pairs.append(("charging", .bool(charging))) }
        if let charging = battery.leftCharging { pairs.append(("left_charging", .bool(charging))) }
        if let charging = battery.rightCharging { pairs.append(("right_charging", .bool(charging))) }
        if let charging = battery.caseCharging { pairs.append(("case_charging", .bool(charging))) }
        return .object(pairs)
    }

    /// `<base>/accessory/<ID>`: the accessory's state object.
    public func status(_ status: AccessoryStatus) -> JSONValue {
        let configuration = status.registration?.configuration
        return [
            "id": .string(status.accessory.id.description),
            "name": .string(status.accessory.displayName),
            "product": .string(status.accessory.product),
            "state": .string(status.accessory.state.name),
            "registration": .string(status.registrationState),
            "capabilities": .array((configuration?.deviceCapabilities.names ?? []).map(JSONValue.string)),
            "placement": .string(status.placement?.rawValue),
            "worn": status.worn.map(JSONValue.bool) ?? .null,
            "primary_source": Self.address(configuration?.primaryAudioSourceDeviceIdentifier),
            "secondary_source": Self.address(configuration?.secondaryAudioSourceDeviceIdentifier),
            "routes": .array(status.routes.map { .string($0.description) }),
            "available": .bool(status.available),
            "rssi": .int(status.rssi),
            "gateway": .string(status.gateway),
            "battery": battery(status.battery),
            "last_seen": status.lastSeen.map { .string(ISO8601.string($0)) } ?? .null,
            "last_error": status.lastError.map { accessoryError($0, at: nil) } ?? .null,
            "address": Self.address(status.heardFrom),
            "identity": .string(status.identity.rawValue),
            "keys": keys(status.keys),
            "model": .string(status.model),
            "room": .string(status.room),
            "home_sources": .array(status.homeSources.map { .string($0.description) }),
            "alias": Self.address(status.alias),
            "head_tracking": .string(status.headTracking?.rawValue),
        ]
    }

    /// `"keys":{"irk":bool,"encryption_key":bool}`: whether each is set, never the keys.
    public func keys(_ presence: KeyPresence) -> JSONValue {
        ["irk": .bool(presence.irk), "encryption_key": .bool(presence.encryptionKey)]
    }

    public func availability(_ available: Bool) -> JSONValue {
        ["state": .string(available ? "online" : "offline")]
    }

    /// `<base>/accessory/<ID>/error` (and `last_error`, without `at` when nil).
    public func accessoryError(_ error: AccessoryControlDevice.Error, at time: Timestamp?) -> JSONValue {
        var pairs: [(String, JSONValue)] = [
            ("code", .string(error.code.rawValue)),
            ("operation", .string(error.operation.rawValue)),
            ("field", .string(error.field?.rawValue)),
            ("message", .string(error.message)),
            ("recovery", .string(error.recovery?.rawValue)),
        ]
        if let time { pairs.append(("at", .string(ISO8601.string(time)))) }
        return .object(pairs)
    }

    /// A refused sensor frame on `<base>/accessory/<ID>/error`: the registry errors' shape, with
    /// operation `headTracking` and no field (the frame as a whole is at fault).
    public func sensorFrameError(_ error: AudioAccessoryError, at time: Timestamp) -> JSONValue {
        [
            "code": .string(error.code.rawValue),
            "operation": .string(error.operation.rawValue),
            "field": .null,
            "message": .string(error.message),
            "recovery": .null,
            "at": .string(ISO8601.string(time)),
        ]
    }

    /// `<base>/accessory/<ID>/imu`: the frame's bytes unchanged, as lower-case hex.
    public func sensorFrame(_ frame: [UInt8]) -> JSONValue {
        ["imu": .string(Hex.encode(frame))]
    }

    /// `<base>/accessory/<ID>/decision`.
    public func decision(_ decision: Decision, at time: Timestamp) -> JSONValue {
        [
            "action": .string(decision.action.rawValue),
            "accessory": .string(decision.accessory.description),
            "source": .string(decision.source.description),
            "source_name": .string(sourceNames[decision.source]),
            "reason": .string(decision.reason.description),
            "placement": .string(decision.placement?.rawValue),
            "at": .string(ISO8601.string(time)),
        ]
    }

    /// `<base>/source/<ID>/route`.
    public func route(_ change: RouteChange, accessoryName: String?, at time: Timestamp) -> JSONValue {
        [
            "source": .string(change.source.description),
            "name": .string(sourceNames[change.source]),
            "target": .string(change.target.description),
            "accessory_name": .string(accessoryName),
            "reason": .string(change.reason.description),
            "at": .string(ISO8601.string(time)),
        ]
    }

    public func setupError(_ error: SetupError?) -> JSONValue {
        guard let error else { return .null }
        return ["domain": .string(SetupError.domain), "code": .string(error.code.name), "raw": .int(error.code.rawValue)]
    }

    /// `<base>/bridge/event`.
    public func event(_ event: SetupEvent, at time: Timestamp) -> JSONValue {
        [
            "type": .string(event.type.name),
            "raw": event.type.apiRaw.map(JSONValue.int) ?? .null,
            "accessory": event.accessory.map(accessory) ?? .null,
            "error": setupError(event.error),
            "at": .string(ISO8601.string(time)),
        ]
    }

    /// `<base>/bridge/picker`.
    public func picker(_ picker: Picker?) -> JSONValue {
        guard let picker else {
            return ["state": "idle", "products": [], "candidates": [], "expires_at": .null]
        }
        return [
            "state": "presented",
            "products": .array(picker.products.map(JSONValue.string)),
            "candidates": .array(
                picker.candidates.map { candidate in
                    [
                        "id": .string(candidate.id.description),
                        "name": .string(candidate.name),
                        "product": .string(candidate.product),
                        "rssi": .int(candidate.rssi),
                        "gateway": .string(candidate.gateway),
                    ]
                }),
            "expires_at": picker.expiresAt.map { .string(ISO8601.string($0)) } ?? .null,
        ]
    }

    /// `<base>/bridge/last_response`: which request, its transaction, `ok` or `error` and
    /// the error (`code`, `message`) or null, and when.
    public func lastResponse(
        _ name: String, _ result: Result<JSONValue, ResponseError>, transaction: JSONValue?, at now: Timestamp
    )
        -> JSONValue
    {
        var error = JSONValue.null
        if case .failure(let failure) = result {
            error = ["code": .string(failure.code), "domain": .string(failure.domain), "message": .string(failure.message)]
        }
        return [
            "request": .string(name),
            "transaction": transaction ?? .null,
            "status": error.isNull ? "ok" : "error",
            "error": error,
            "at": .string(ISO8601.string(now)),
        ]
    }

    /// A request's response: `{"status":"ok","data":...,"transaction":T}` or the error form.
    public func response(_ result: Result<JSONValue, ResponseError>, transaction: JSONValue?) -> JSONValue {
        var pairs: [(String, JSONValue)]
        switch result {
        case .success(let data):
            pairs = [("status", "ok"), ("data", data)]
        case .failure(let error):
            pairs = [
                ("status", "error"),
                (
                    "error",
                    [
                        "code": .string(error.code),
                        "domain": .string(error.domain),
                        "raw": .int(error.raw),
                        "message": .string(error.message),
                    ]
                ),
                ("data", .object([])),
            ]
        }
        if let transaction { pairs.append(("transaction", transaction)) }
        return .object(pairs)
    }

    /// `{"level","message","at"}` for `bridge/log`.
    public func log(level: String, message: String, at time: Timestamp) -> JSONValue {
        ["level": .string(level), "message": .string(message), "at": .string(ISO8601.string(time))]
    }
}
