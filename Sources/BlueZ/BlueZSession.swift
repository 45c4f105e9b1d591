import AccessoryKit
import CSystemd
import Telemetry

#if canImport(Glibc)
    import Glibc
#endif

/// The D-Bus side of ``BlueZClient``: the connection, BlueZ's adapters and devices as its
/// signals describe them, and discovery on the adapter in use. Only the client's thread
/// touches it; sd-bus calls it back from `sd_bus_process`, on that same thread.
final class BlueZSession {
    static let service = "org.bluez"
    /// BlueZ's interfaces, as literals a name in a message is compared with (``DBusReader/is(_:_:)``).
    enum Interface {
        static let adapter: StaticString = "org.bluez.Adapter1"
        static let device: StaticString = "org.bluez.Device1"
        static let monitorManager: StaticString = "org.bluez.AdvertisementMonitorManager1"
    }
    static let adapterInterface = Interface.adapter.description
    static let deviceInterface = Interface.device.description
    static let monitorManagerInterface = Interface.monitorManager.description
    /// A call to BlueZ waits at most this long, so the thread always comes back to its loop
    /// (and to a stop) within it.
    static let callTimeoutMicroseconds: UInt64 = 2_000_000
    /// How long the thread sleeps in sd_bus_wait at most before it looks at the stop flag.
    static let waitMicroseconds: UInt64 = 200_000
    /// Devices remembered at most: BlueZ drops a silent device after 30 s, and a flood of
    /// rotating addresses must not grow this without limit (the oldest path goes first).
    static let maximumDevices = 4_096

    private struct Device {
        var address: BluetoothAddress
        var random: Bool
        var rssi: Int?
        var name: String?
    }

    private struct Adapter {
        var powered: Bool
        var monitorTypes: [String]?
    }

    private let settings: BlueZClient.Settings
    /// libsystemd's sd-bus, opened by the client before the session starts.
    private let sd: LibSystemd
    private let report: @Sendable (BlueZEvent) -> Void
    private let stopping: () -> Bool
    private var bus: OpaquePointer?
    private var slots: [OpaquePointer] = []
    /// The exported monitor's object manager and object (passive scanning), while connected.
    private var monitorSlots: [OpaquePointer] = []
    private var adapters: [String: Adapter] = [:]
    private var devices: [String: Device] = [:]
    /// The adapter discovery runs on (`/org/bluez/hci0`), and its path with a slash, the
    /// prefix of its devices' paths.
    private var adapterPath: String?
    private var devicePrefix = ""
    private var needsSetup = true
    private var retryAt: UInt64 = 0
    private var state: BlueZState?

    init(
        settings: BlueZClient.Settings, sd: LibSystemd, report: @escaping @Sendable (BlueZEvent) -> Void,
        stopping: @escaping () -> Bool
    ) {
        self.settings = settings
        self.sd = sd
        self.report = report
        self.stopping = stopping
    }

    // MARK: the loop

    func run() {
        while !stopping() {
            guard let bus else {
                if Self.monotonicMicroseconds() >= retryAt { connect() } else { usleep(100_000) }
                continue
            }
            if needsSetup, Self.monotonicMicroseconds() >= retryAt { setUp() }
            let processed = sd.process(bus, nil)
            if processed < 0 {
                lost(processed)
                continue
            }
            if processed > 0 { continue }
            let timeout = needsSetup ? min(Self.waitMicroseconds, max(retryAt &- Self.monotonicMicroseconds(), 1)) : Self.waitMicroseconds
            if sd.wait(bus, timeout) < 0 { lost(-ECONNRESET) }
        }
        close(stopDiscovery: true)
    }

    private func connect() {
        var opened: OpaquePointer?
        var result: Int32
        if let address = settings.busAddress {
            result = sd.new(&opened)
            if result >= 0 { result = sd.setAddress(opened, address) }
            if result >= 0 { result = sd.setBusClient(opened, 1) }
            if result >= 0 { result = sd.start(opened) }
        } else {
            result = sd.openSystem(&opened)
        }
        guard result >= 0, let opened else {
            if let opened { _ = sd.unref(opened) }
            let fault: BlueZFault = result == -EACCES || result == -EPERM ? .permissionDenied : .noSystemBus
            fail(fault, Self.errorText(result), dropBus: false)
            return
        }
        bus = opened
        let user = Unmanaged.passUnretained(self).toOpaque()
        var wanted: [(String?, String, String)] = [
            (Self.service, "org.freedesktop.DBus.ObjectManager", "InterfacesAdded"),
            (Self.service, "org.freedesktop.DBus.ObjectManager", "InterfacesRemoved"),
            (Self.service, "org.freedesktop.DBus.Properties", "PropertiesChanged"),
        ]
        wanted.append(("org.freedesktop.DBus", "org.freedesktop.DBus", "NameOwnerChanged"))
        for (sender, interface, member) in wanted {
            var slot: OpaquePointer?
            let added = sd.matchSignal(opened, &slot, sender, nil, interface, member, Self.signalHandler, user)
            if added < 0 {
                fail(added == -EACCES || added == -EPERM ? .permissionDenied : .noSystemBus, Self.errorText(added), dropBus: true)
                return
            }
            if let slot { slots.append(slot) }
        }
        needsSetup = true
        retryAt = 0
    }

    /// The connection broke (the bus daemon went away): start over after the retry delay.
    private func lost(_ result: Int32) {
        fail(.noSystemBus, Self.errorText(result), dropBus: true)
    }

    private func close(stopDiscovery: Bool) {
        guard let bus else { return }
        if stopDiscovery, let adapterPath, state?.mode == .active {
            // Best effort: BlueZ also ends a client's discovery session when its connection closes.
            _ = call(adapterPath, Self.adapterInterface, "StopDiscovery")
        }
        for slot in slots + monitorSlots { _ = sd.slotUnref(slot) }
        slots = []
        monitorSlots = []
        _ = sd.flushCloseUnref(bus)
        self.bus = nil
    }

    // MARK: discovery

    /// BlueZ's objects, the adapter, its discovery filter and discovery: each step's failure is
    /// the fault reported, and the whole is tried again after the retry delay.
    private func setUp() {
        needsSetup = false
        let listed = call(
            "/", "org.freedesktop.DBus.ObjectManager", "GetManagedObjects",
            read: { reply in self.managedObjects(DBusReader(message: reply, sd: self.sd)) })
        if case .failure(let failure) = listed { return fail(failure) }
        let chosen = settings.adapter.map { "/org/bluez/\($0)" } ?? adapters.keys.sorted().first
        guard let chosen, let adapter = adapters[chosen] else {
            return fail(.noAdapter, settings.adapter.map { "BlueZ lists no \($0)" } ?? "BlueZ lists no adapter", retry: false)
        }
        use(chosen)
        guard adapter.powered else { return fail(.adapterOff, "\(name(of: chosen)) is powered off", retry: false) }
        // Passive scanning asked for and offered: BlueZ runs the monitor, no discovery session
        // (what the adapter hears still arrives as the devices' signals). Else active, said so.
        let offersPassive = adapter.monitorTypes?.contains("or_patterns") == true
        if settings.passive, offersPassive, registerMonitor(chosen) {
            return publish(BlueZState(adapter: name(of: chosen), mode: .passive))
        }
        let filtered = call(chosen, Self.adapterInterface, "SetDiscoveryFilter", arguments: appendDiscoveryFilter)
        if case .failure(let failure) = filtered { return fail(failure) }
        let started = call(chosen, Self.adapterInterface, "StartDiscovery")
        if case .failure(let failure) = started, failure.name != "org.bluez.Error.InProgress" { return fail(failure) }
        publish(BlueZState(adapter: name(of: chosen), mode: .active, passiveUnavailable: settings.passive))
    }

    /// The filter the documentation names (``DiscoveryFilter``), as an `a{sv}`.
    private func appendDiscoveryFilter(_ message: OpaquePointer) -> Int32 {
        var result = sd.messageOpenContainer(message, DBusReader.Code.array, "{sv}")
        func entry(_ key: String, _ contents: String, _ append: () -> Int32) {
            guard result >= 0 else { return }
            result = sd.messageOpenContainer(message, DBusReader.Code.dictEntry, "sv")
            if result >= 0 { result = sd.messageAppendBasic(message, DBusReader.Code.string, key) }
            if result >= 0 { result = sd.messageOpenContainer(message, DBusReader.Code.variant, contents) }
            if result >= 0 { result = append() }
            if result >= 0 { result = sd.messageCloseContainer(message) }
            if result >= 0 { result = sd.messageCloseContainer(message) }
        }
        entry("Transport", "s") { sd.messageAppendBasic(message, DBusReader.Code.string, DiscoveryFilter.transport) }
        entry("DuplicateData", "b") {
            var yes: Int32 = DiscoveryFilter.duplicateData ? 1 : 0
            return sd.messageAppendBasic(message, DBusReader.Code.boolean, &yes)
        }
        if result >= 0 { result = sd.messageCloseContainer(message) }
        return result
    }

    /// Where the monitor is exported: the root BlueZ asks with GetManagedObjects, and the one
    /// monitor under it (an `or_patterns` one: Apple's manufacturer data, Fast Pair's service).
    static let monitorRoot = "/org/aabridge/bluez"
    static let monitorPath = "/org/aabridge/bluez/monitor0"

    /// Exports the monitor (once per connection) and registers it on `adapter`; false when
    /// either fails (then discovery runs, and the source says passive is unavailable).
    private func registerMonitor(_ adapter: String) -> Bool {
        guard let bus else { return false }
        if monitorSlots.isEmpty {
            var manager: OpaquePointer?
            var object: OpaquePointer?
            guard sd.addObjectManager(bus, &manager, Self.monitorRoot) >= 0, let manager else { return false }
            let added = sd.addObjectVtable(
                bus, &object, Self.monitorPath, "org.bluez.AdvertisementMonitor1", sd.monitorVtable, sd.monitorCalls)
            guard added >= 0, let object else {
                _ = sd.slotUnref(manager)
                return false
            }
            monitorSlots = [manager, object]
        }
        let registered = call(adapter, Self.monitorManagerInterface, "RegisterMonitor") { message in
            sd.messageAppendBasic(message, DBusReader.Code.objectPath, Self.monitorRoot)
        }
        switch registered {
        case .success: return true
        case .failure(let failure): return failure.name == "org.bluez.Error.AlreadyExists"
        }
    }

    private func use(_ path: String) {
        if adapterPath != path { devices = [:] }
        adapterPath = path
        devicePrefix = path + "/"
    }

    private func name(of path: String) -> String { String(path.split(separator: "/").last ?? Substring(path)) }

    // MARK: faults

    private func fail(_ failure: CallFailure) {
        fail(failure.fault, failure.detail, dropBus: failure.fault == .noSystemBus)
    }

    /// Reports `fault` and tries again after the retry delay (or, `retry` false, when a signal
    /// says what was missing came: an adapter added, powered).
    private func fail(_ fault: BlueZFault, _ detail: String, dropBus: Bool = false, retry: Bool = true) {
        if dropBus { close(stopDiscovery: false) }
        needsSetup = true
        retryAt = Self.monotonicMicroseconds() + UInt64(max(settings.retryMilliseconds, 10)) * 1_000
        if !retry, bus != nil { retryAt = .max }
        publish(BlueZState(adapter: adapterPath.map(name(of:)), fault: fault, detail: detail))
    }

    private func publish(_ new: BlueZState) {
        guard new != state else { return }
        state = new
        report(.state(new))
    }

    // MARK: calls

    struct CallFailure: Error {
        var name: String
        var detail: String
        var fault: BlueZFault
    }

    /// One method call to BlueZ, bounded by ``callTimeoutMicroseconds``; `read` reads the reply.
    @discardableResult
    private func call(
        _ path: String, _ interface: String, _ member: String, arguments: (OpaquePointer) -> Int32 = { _ in 0 },
        read: (OpaquePointer) -> Void = { _ in }
    ) -> Result<Void, CallFailure> {
        guard let bus else { return .failure(CallFailure(name: "", detail: "not connected", fault: .noSystemBus)) }
        var message: OpaquePointer?
        var result = sd.messageNewMethodCall(bus, &message, Self.service, path, interface, member)
        defer { if let message { _ = sd.messageUnref(message) } }
        if result >= 0, let message { result = arguments(message) }
        guard result >= 0, let message else {
            return .failure(CallFailure(name: "", detail: Self.errorText(result), fault: .noSystemBus))
        }
        var error = sd_bus_error()
        defer { sd.errorFree(&error) }
        var reply: OpaquePointer?
        result = sd.call(bus, message, Self.callTimeoutMicroseconds, &error, &reply)
        defer { if let reply { _ = sd.messageUnref(reply) } }
        guard result >= 0 else {
            let name = error.name.map { String(cString: $0) } ?? ""
            let text = error.message.map { String(cString: $0) } ?? Self.errorText(result)
            return .failure(
                CallFailure(name: name, detail: "\(member): \(name.isEmpty ? "" : name + ": ")\(text)", fault: Self.fault(name, result)))
        }
        if let reply { read(reply) }
        return .success(())
    }

    /// The fault a failed call means, from the error's name (or errno where there is none).
    static func fault(_ name: String, _ result: Int32) -> BlueZFault {
        switch name {
        case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
            return .notRunning
        case "org.freedesktop.DBus.Error.AccessDenied", "org.bluez.Error.NotAuthorized", "org.bluez.Error.NotPermitted":
            return .permissionDenied
        case "org.bluez.Error.NotReady": return .adapterOff
        case "org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownMethod",
            "org.freedesktop.DBus.Error.UnknownInterface", "org.bluez.Error.NotSupported", "org.bluez.Error.DoesNotExist":
            return .noAdapter
        default:
            if result == -EACCES || result == -EPERM { return .permissionDenied }
            if result == -ENOTCONN || result == -ECONNRESET || result == -EPIPE { return .noSystemBus }
            return name.isEmpty ? .notRunning : .noAdapter
        }
    }

    // MARK: what BlueZ says

    /// `a{oa{sa{sv}}}`: every adapter and device BlueZ has now.
    private func managedObjects(_ reader: DBusReader) {
        adapters = [:]
        guard reader.enter(DBusReader.Code.array, "{oa{sa{sv}}}") else { return }
        while reader.enter(DBusReader.Code.dictEntry, "oa{sa{sv}}") {
            if let path = reader.string() { interfaces(of: path, reader, heard: false) }
            reader.exit()
        }
        reader.exit()
    }

    /// An `a{sa{sv}}` of the object at `path` (GetManagedObjects, InterfacesAdded).
    private func interfaces(of path: String, _ reader: DBusReader, heard: Bool) {
        guard reader.enter(DBusReader.Code.array, "{sa{sv}}") else { return reader.skip() }
        var adapter: BlueZProperties?
        var monitor: BlueZProperties?
        var device: BlueZProperties?
        while reader.enter(DBusReader.Code.dictEntry, "sa{sv}") {
            if let interface = reader.cString() {
                if DBusReader.is(interface, Interface.adapter) {
                    adapter = BlueZProperties(reader)
                } else if DBusReader.is(interface, Interface.monitorManager) {
                    monitor = BlueZProperties(reader)
                } else if DBusReader.is(interface, Interface.device) {
                    device = BlueZProperties(reader)
                }
            }
            reader.exit()
        }
        reader.exit()
        if let adapter {
            adapters[path] = Adapter(powered: adapter.powered ?? false, monitorTypes: monitor?.supportedMonitorTypes)
            // An adapter plugged (back) in while none was in use: set it up at once.
            if adapterPath == nil || adapterPath == path, heard, state?.mode == nil {
                needsSetup = true
                retryAt = 0
            }
        }
        if let device, path.hasPrefix(devicePrefix), adapterPath != nil, let address = device.address {
            remember(path, Device(address: address, random: device.addressType == "random", rssi: device.rssi, name: device.name))
            // A device already known when the client started is BlueZ's memory, not a sighting.
            if heard, device.rssi != nil { hear(path, device) }
        }
    }

    private func remember(_ path: String, _ device: Device) {
        if devices[path] == nil, devices.count >= Self.maximumDevices, let any = devices.keys.first { devices[any] = nil }
        devices[path] = device
    }

    /// One advertisement from what changed on the device at `path`.
    private func hear(_ path: String, _ changed: BlueZProperties) {
        guard var device = devices[path] else { return }
        if let rssi = changed.rssi { device.rssi = rssi }
        if let name = changed.name { device.name = name }
        devices[path] = device
        guard state?.mode != nil, changed.manufacturerData != nil || changed.serviceData != nil || changed.address != nil else { return }
        let advertisement = Advertisement(
            gateway: settings.gateway, address: device.address, isRandomAddress: device.random, rssi: device.rssi, name: device.name,
            manufacturerData: changed.manufacturerData ?? [], serviceData: changed.serviceData ?? [], receivedAt: 0)
        report(.heard(advertisement))
    }

    /// One matched signal. The member and the interface are compared where sd-bus holds them;
    /// a `PropertiesChanged` is read only where it can matter: a device's (`Device1`) under the
    /// adapter in use, or an adapter's (`Adapter1`). Any other interface's changes, the
    /// common case on a busy bus (media, batteries, other adapters' devices), are not read at all.
    fileprivate func signal(_ message: OpaquePointer) {
        guard let member = sd.messageGetMember(message) else { return }
        let reader = DBusReader(message: message, sd: sd)
        if DBusReader.is(member, "PropertiesChanged") {
            guard let objectPath = sd.messageGetPath(message), let interface = reader.cString() else { return }
            if DBusReader.is(interface, Interface.device) {
                guard adapterPath != nil else { return }
                let path = String(cString: objectPath)
                guard path.hasPrefix(devicePrefix) else { return }
                let properties = BlueZProperties(reader)
                if properties.heardSomething { hear(path, properties) }
            } else if DBusReader.is(interface, Interface.adapter) {
                adapterChanged(String(cString: objectPath), BlueZProperties(reader))
            }
        } else if DBusReader.is(member, "InterfacesAdded") {
            if let path = reader.string() { interfaces(of: path, reader, heard: true) }
        } else if DBusReader.is(member, "InterfacesRemoved") {
            guard let path = reader.string() else { return }
            removed(path, reader)
        } else if DBusReader.is(member, "NameOwnerChanged") {
            guard reader.string() == Self.service, reader.string() != nil, let owner = reader.string() else { return }
            if owner.isEmpty {
                adapters = [:]
                devices = [:]
                adapterPath = nil
                fail(.notRunning, "bluetoothd left the bus")
            } else {
                needsSetup = true
                retryAt = 0
            }
        }
    }

    private func removed(_ path: String, _ reader: DBusReader) {
        guard reader.enter(DBusReader.Code.array, "s") else { return }
        var interfaces: [String] = []
        while interfaces.count < 64, let interface = reader.string() { interfaces.append(interface) }
        reader.exit()
        if interfaces.contains(Self.deviceInterface) { devices[path] = nil }
        if interfaces.contains(Self.adapterInterface) {
            adapters[path] = nil
            if path == adapterPath {
                devices = [:]
                adapterPath = nil
                fail(.noAdapter, "\(name(of: path)) was removed", retry: false)
            }
        }
    }

    /// What changed on the adapter at `path`: its power.
    private func adapterChanged(_ path: String, _ properties: BlueZProperties) {
        guard let powered = properties.powered else { return }
        adapters[path]?.powered = powered
        guard path == adapterPath || adapterPath == nil else { return }
        if powered {
            if state?.mode == nil {
                needsSetup = true
                retryAt = 0
            }
        } else {
            fail(.adapterOff, "\(name(of: path)) was powered off", retry: false)
        }
    }

    // MARK: plumbing

    /// sd-bus's handler for every matched signal: back into the session it was added with.
    private static let signalHandler: sd_bus_message_handler_t = { message, user, _ in
        guard let message, let user else { return 0 }
        Unmanaged<BlueZSession>.fromOpaque(user).takeUnretainedValue().signal(message)
        return 0
    }

    static func errorText(_ result: Int32) -> String {
        guard let text = strerror(-result) else { return "error \(result)" }
        return String(cString: text)
    }

    static func monotonicMicroseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000 + UInt64(time.tv_nsec) / 1_000
    }
}
