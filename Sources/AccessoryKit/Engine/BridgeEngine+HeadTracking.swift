extension BridgeEngine {
    /// The largest IMU frame `Session.sendDataToAudioExtension` takes, in bytes.
    public static let maximumSensorFrameSize = 70

    /// What the state shows for a registration and its session flag: a session exists only
    /// for an active registration with `headTracking`.
    func headTrackingState(_ registration: Registration?, active: Bool) -> HeadTrackingState? {
        guard let registration, !registration.isInvalidated,
            registration.configuration.deviceCapabilities.contains(.headTracking)
        else { return nil }
        return active ? .active : .inactive
    }

    /// `accessory/head_tracking`: the rules of `current(for:)` first (never registered:
    /// `invalidRequest`; invalidated: `invalidated`), then the capability, which a session
    /// depends on (without it: `invalidRequest`, as for any field of a capability not registered
    /// at `register`). Setting what it already is changes nothing and says nothing.
    mutating func setHeadTracking(_ id: BluetoothAddress, active: Bool) throws(AccessoryControlDevice.Error) {
        guard session.accessories[id] != nil, records[id] != nil else {
            throw AccessoryControlDevice.Error(
                .invalidRequest, operation: .headTracking, field: .accessory, message: "unknown accessory \(id)")
        }
        let configuration = try registry.configuration(of: id, operation: .headTracking)
        guard configuration.deviceCapabilities.contains(.headTracking) else {
            throw AccessoryControlDevice.Error(
                .invalidRequest, operation: .headTracking, field: .deviceCapabilities,
                message:
                    "a head-tracking session needs the headTracking capability; \(id) is registered with \(configuration.deviceCapabilities)"
            )
        }
        guard records[id]?.headTrackingActive != active else { return }
        records[id]?.headTrackingActive = active
        headTrackingChanged(id)
    }

    /// Ends the session (removal, invalidation, a new registration): announced only when it was
    /// active, since an inactive one forwarded nothing that stops now.
    ///
    /// - Parameter removed: the accessory the session just removed (the event names it; the
    ///   session no longer can).
    mutating func endHeadTracking(_ id: BluetoothAddress, removed: Accessory? = nil) {
        guard records[id]?.headTrackingActive == true else { return }
        records[id]?.headTrackingActive = false
        headTrackingChanged(id, accessory: removed)
    }

    private mutating func headTrackingChanged(_ id: BluetoothAddress, accessory: Accessory? = nil) {
        if let accessory = accessory ?? session.accessories[id] { emit(.event(SetupEvent(.headTrackingChanged, accessory: accessory))) }
        markChanged(id)
    }

    /// One IMU frame from the relay: forwarded while the session is active and the frame is
    /// 1-70 bytes, else refused. The size is judged first: a malformed frame is the relay's
    /// fault whatever the session. Nothing in the state changes either way.
    mutating func sendSensorFrame(_ frame: [UInt8], from id: BluetoothAddress) {
        guard !frame.isEmpty, frame.count <= Self.maximumSensorFrameSize else {
            emit(
                .sensorFrameRefused(
                    id,
                    AudioAccessoryError(
                        .invalidDataSize,
                        message: "an IMU frame is 1-\(Self.maximumSensorFrameSize) bytes; this one is \(frame.count)")))
            return
        }
        guard records[id]?.headTrackingActive == true, headTrackingState(registry[id], active: true) != nil else {
            emit(.sensorFrameRefused(id, AudioAccessoryError(.notActivated, message: "the head-tracking session of \(id) is not active")))
            return
        }
        emit(.sensorFrame(id, frame))
    }
}
