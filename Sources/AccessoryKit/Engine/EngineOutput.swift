/// What the runtime must publish or store, in order.
public enum EngineOutput: Hashable, Sendable {
    /// A session event (`bridge/event`).
    case event(SetupEvent)
    /// The picker changed; nil = idle (`bridge/picker`).
    case pickerChanged(Picker?)
    /// An accessory's state object changed (`accessory/<ID>`).
    case accessoryChanged(AccessoryStatus)
    /// An accessory is gone: clear its retained topics and Home Assistant entities.
    case accessoryRemoved(BluetoothAddress)
    /// `accessory/<ID>/availability`.
    case availabilityChanged(BluetoothAddress, available: Bool)
    /// A registration was created, replaced, updated or invalidated.
    case registrationChanged(BluetoothAddress, Registration)
    /// `source/<ID>/route`.
    case routeChanged(RouteChange)
    /// `accessory/<ID>/decision`.
    case decision(Decision)
    /// `accessory/<ID>/error`.
    case accessoryError(BluetoothAddress, AccessoryControlDevice.Error)
    /// The bridge, as the container role, registered an `auto_register` accessory again by
    /// itself (``ReevaluationReason``): `error` is nil when that succeeded, else the failure
    /// (also on `accessory/<ID>/error`). Logged.
    case registrationReevaluated(BluetoothAddress, because: ReevaluationReason, error: AccessoryControlDevice.Error?)
    /// An accessory's keys changed (the resolver and the decoders take them; never published).
    case keysChanged(BluetoothAddress, AccessoryKeys)
    /// A source device's name changed (`source/name`; the configuration's name wins): its
    /// route is published again with it.
    case sourceNamed(BluetoothAddress, String?)
    /// An IMU frame of an accessory whose head-tracking session is active, to forward unchanged
    /// on `accessory/<ID>/imu`. Never stored, never in the state.
    case sensorFrame(BluetoothAddress, [UInt8])
    /// A sensor frame refused (`invalidDataSize`, `notActivated`), for `accessory/<ID>/error`
    /// with operation `headTracking`. Not the state's `last_error`: a relay sending at 200 Hz
    /// would otherwise rewrite the retained state with every frame.
    case sensorFrameRefused(BluetoothAddress, AudioAccessoryError)
    /// A durable change.
    case storage(StorageWrite)
}
