/// The AccessorySetupKit session (`ASAccessorySession`): activation, the picker,
/// authorization, rename, removal and migration. Events are appended to the
/// caller's list in the order the framework would deliver them; failures throw
/// an `SetupError` after appending any events that still happen (a failed setup
/// still dismisses the picker).
public struct SetupSession: Hashable, Sendable {
    /// Session lifecycle.
    public enum State: String, Hashable, Sendable {
        /// Not activated yet; `accessories` is not valid.
        case idle
        /// Activated; `accessories` is valid.
        case activated
        /// Invalidated for good; every operation fails with `invalidated`.
        case invalidated
    }

    public private(set) var state: State = .idle
    /// Known accessories (authorized or awaiting authorization) by id.
    public private(set) var accessories: AccessoryTable<Accessory>
    /// The presented picker, nil when idle.
    public private(set) var picker: Picker?
    /// The configured products (picker display items), in order.
    public let products: [Product]
    /// The `immediate` range threshold.
    public let immediateRSSI: Int
    /// How long a candidate stays selectable after it was last heard.
    public let availabilityTimeoutMilliseconds: Int64

    /// Creates a session over restored accessories; call `activate` before anything else.
    public init(
        products: [Product], accessories: [Accessory] = [], immediateRSSI: Int = -50, availabilityTimeoutMilliseconds: Int64 = 120_000
    ) {
        self.products = products
        self.accessories = AccessoryTable(accessories.map { ($0.id, $0) })
        self.immediateRSSI = immediateRSSI
        self.availabilityTimeoutMilliseconds = availabilityTimeoutMilliseconds
    }

    /// The product with a name.
    public func product(named name: String) -> Product? {
        products.first { $0.name == name }
    }

    /// Fails unless the session is activated.
    public func requireActive() throws(SetupError) {
        switch state {
        case .activated: return
        case .idle: throw SetupError(.invalidRequest, "the session is not activated yet")
        case .invalidated: throw SetupError(.invalidated, "the session was invalidated")
        }
    }

    // MARK: Lifecycle

    /// Activates the session: `activated` is the first event, and `accessories` is valid from then on.
    public mutating func activate(events: inout [SetupEvent]) throws(SetupError) {
        switch state {
        case .idle:
            state = .activated
            events.append(SetupEvent(.activated))
        case .activated: throw SetupError(.invalidRequest, "the session is already activated")
        case .invalidated: throw SetupError(.invalidated, "the session was invalidated")
        }
    }

    /// Invalidates the session (clean shutdown); a presented picker is dismissed first.
    public mutating func invalidate(events: inout [SetupEvent]) throws(SetupError) {
        guard state != .invalidated else { throw SetupError(.invalidated, "the session was invalidated") }
        if picker != nil {
            picker = nil
            events.append(SetupEvent(.pickerDidDismiss))
        }
        state = .invalidated
        events.append(SetupEvent(.invalidated))
    }

    /// Adds migrated accessories as authorized, without a picker, then emits one `migrationComplete`.
    /// Items already known are skipped. Validation (`MigrationItem.validate`) happens at config load.
    /// - Returns: the accessories added.
    public mutating func migrate(_ items: [MigrationItem], events: inout [SetupEvent]) throws(SetupError) -> [Accessory] {
        try requireActive()
        var added: [Accessory] = []
        for item in items where accessories[item.id] == nil {
            guard let product = product(named: item.product) else {
                throw SetupError(.invalidRequest, "migration item \(item.id) names unknown product '\(item.product)'")
            }
            let accessory = makeAccessory(id: item.id, name: item.name, product: product, state: .authorized, ssid: item.ssid)
            accessories[item.id] = accessory
            added.append(accessory)
            events.append(SetupEvent(.accessoryAdded, accessory: accessory))
        }
        events.append(SetupEvent(.migrationComplete))
        return added
    }

    // MARK: Picker

    /// Presents the picker for some products (nil or empty: all).
    public mutating func showPicker(
        products names: [String]?, timeout: DiscoveryTimeout, now: Timestamp, events: inout [SetupEvent]
    ) throws(SetupError) {
        try requireActive()
        guard picker == nil else { throw SetupError(.pickerAlreadyActive, "a picker is already presented") }
        var shown: [String] = []
        if let names, !names.isEmpty {
            for name in names {
                guard product(named: name) != nil else { throw SetupError(.invalidRequest, "unknown product '\(name)'") }
            }
            shown = products.map(\.name).filter { names.contains($0) }
        } else {
            shown = products.map(\.name)
        }
        guard !shown.isEmpty else { throw SetupError(.invalidRequest, "no products are configured") }
        if case .seconds(let seconds) = timeout, seconds <= 0 {
            throw SetupError(.invalidRequest, "timeout must be positive")
        }
        picker = Picker(products: shown, candidates: [], expiresAt: timeout.milliseconds.map { now.advanced(byMilliseconds: $0) })
        events.append(SetupEvent(.pickerDidPresent))
    }

    /// Offers an advertisement to the presented picker.
    /// - Returns: whether it became a new candidate (and `accessoryDiscovered` was emitted).
    @discardableResult
    public mutating func observe(_ sighting: AdvertisementSighting, now: Timestamp, events: inout [SetupEvent]) -> Bool {
        guard state == .activated, var picker, accessories[sighting.accessoryID] == nil else { return false }
        if let index = picker.candidates.firstIndex(where: { $0.id == sighting.accessoryID }) {
            picker.candidates[index].lastSeen = now
            picker.candidates[index].rssi = sighting.rssi
            picker.candidates[index].gateway = sighting.gateway
            if let decoded = sighting.decoded { picker.candidates[index].decoded = decoded }
            if let profile = sighting.profile { picker.candidates[index].profile = profile }
            if let name = Self.candidateName(sighting) { picker.candidates[index].name = name }
            self.picker = picker
            return false
        }
        guard picker.candidates.count < Picker.maximumCandidates,
            let product = products.first(where: {
                picker.products.contains($0.name) && $0.descriptor.matches(sighting, immediateRSSI: immediateRSSI)
            })
        else { return false }
        let name = Self.candidateName(sighting)
        var candidate = Picker.Candidate(
            id: sighting.accessoryID, name: name, product: product.name, rssi: sighting.rssi, gateway: sighting.gateway, lastSeen: now)
        candidate.decoded = sighting.decoded
        candidate.profile = sighting.profile
        picker.candidates.append(candidate)
        self.picker = picker
        let discovered = makeAccessory(
            id: sighting.accessoryID, name: name ?? product.name, product: product, state: .unauthorized, ssid: nil)
        events.append(SetupEvent(.accessoryDiscovered, accessory: discovered))
        return true
    }

    /// What a candidate is called: its advertised name, else its decoded model ("AirPods Pro").
    private static func candidateName(_ sighting: AdvertisementSighting) -> String? {
        Accessory.displayable(sighting.name) ?? sighting.decoded?.model
    }

    /// Sets up a candidate: pairing (or bridging), rename, `accessoryAdded`, `pickerDidDismiss`, in that order.
    /// - Returns: the added accessory.
    public mutating func select(
        _ id: BluetoothAddress, name newName: String?, now: Timestamp, events: inout [SetupEvent]
    ) throws(SetupError) -> Accessory {
        try requireActive()
        guard let picker else { throw SetupError(.invalidRequest, "no picker is presented") }
        guard let candidate = picker.candidate(id), let product = product(named: candidate.product) else {
            throw SetupError(.invalidRequest, "\(id) is not a candidate of the presented picker")
        }
        if now.milliseconds(since: candidate.lastSeen) > availabilityTimeoutMilliseconds {
            let error = SetupError(.connectionFailed, "\(id) was not heard for \(availabilityTimeoutMilliseconds / 1000) s")
            self.picker = nil
            events.append(SetupEvent(.pickerSetupFailed, error: error))
            events.append(SetupEvent(.pickerDidDismiss))
            throw error
        }
        let bridging = product.descriptor.supportedOptions.contains(.bluetoothTransportBridging)
        events.append(SetupEvent(bridging ? .pickerSetupBridging : .pickerSetupPairing))
        var name = candidate.name ?? product.name
        if let newName, !newName.isEmpty, product.setupOptions.contains(.rename) {
            name = newName
            events.append(SetupEvent(.pickerSetupRename))
        }
        let state: Accessory.State = product.setupOptions.contains(.confirmAuthorization) ? .awaitingAuthorization : .authorized
        let accessory = makeAccessory(id: id, name: name, product: product, state: state, ssid: nil)
        accessories[id] = accessory
        self.picker = nil
        events.append(SetupEvent(.accessoryAdded, accessory: accessory))
        events.append(SetupEvent(.pickerDidDismiss))
        return accessory
    }

    /// Ends discovery: with no candidates the picker dismisses with `discoveryTimeout`; with candidates nothing happens.
    public mutating func finishDiscovery(events: inout [SetupEvent]) throws(SetupError) {
        try requireActive()
        guard let picker else { throw SetupError(.invalidRequest, "no picker is presented") }
        if picker.candidates.isEmpty {
            self.picker = nil
            events.append(SetupEvent(.pickerDidDismiss, error: SetupError(.discoveryTimeout, "discovery finished without a candidate")))
        }
    }

    /// The user cancels: `pickerDidDismiss` with `userCancelled`.
    public mutating func dismiss(events: inout [SetupEvent]) throws(SetupError) {
        try requireActive()
        guard picker != nil else { throw SetupError(.invalidRequest, "no picker is presented") }
        picker = nil
        events.append(SetupEvent(.pickerDidDismiss, error: SetupError(.userCancelled, "dismissed by request")))
    }

    /// Advances time: a picker past its timeout dismisses with `discoveryTimeout`.
    public mutating func tick(now: Timestamp, events: inout [SetupEvent]) {
        guard state == .activated, let expiresAt = picker?.expiresAt, now >= expiresAt else { return }
        picker = nil
        events.append(SetupEvent(.pickerDidDismiss, error: SetupError(.discoveryTimeout, "discovery timed out")))
    }

    /// The earliest time `tick` has something to do, for the runtime's timer.
    public var nextDeadline: Timestamp? { state == .activated ? picker?.expiresAt : nil }

    // MARK: Accessories

    /// Finishes an accessory awaiting authorization.
    public mutating func authorize(_ id: BluetoothAddress, events: inout [SetupEvent]) throws(SetupError) -> Accessory {
        var accessory = try awaiting(id)
        accessory.state = .authorized
        accessories[id] = accessory
        events.append(SetupEvent(.accessoryChanged, accessory: accessory))
        return accessory
    }

    /// Fails an accessory awaiting authorization: it is removed.
    public mutating func failAuthorization(_ id: BluetoothAddress, events: inout [SetupEvent]) throws(SetupError) -> Accessory {
        var accessory = try awaiting(id)
        accessories[id] = nil
        accessory.state = .unauthorized
        events.append(SetupEvent(.accessoryRemoved, accessory: accessory))
        return accessory
    }

    /// Renames an accessory: `accessoryChanged`.
    public mutating func rename(_ id: BluetoothAddress, to name: String, events: inout [SetupEvent]) throws(SetupError) -> Accessory {
        try requireActive()
        guard var accessory = accessories[id] else { throw SetupError(.invalidRequest, "unknown accessory \(id)") }
        guard !name.isEmpty else { throw SetupError(.invalidRequest, "the name must not be empty") }
        guard accessory.displayName != name else { return accessory }
        accessory.displayName = name
        accessories[id] = accessory
        events.append(SetupEvent(.accessoryChanged, accessory: accessory))
        return accessory
    }

    /// Removes an accessory: `accessoryRemoved`.
    public mutating func remove(_ id: BluetoothAddress, events: inout [SetupEvent]) throws(SetupError) -> Accessory {
        try requireActive()
        guard let accessory = accessories.removeValue(forKey: id) else { throw SetupError(.invalidRequest, "unknown accessory \(id)") }
        events.append(SetupEvent(.accessoryRemoved, accessory: accessory))
        return accessory
    }

    /// Takes an accessory as storage holds it (added, renamed, authorized... by another bridge
    /// instance sharing the database, or left by one whose accessories this instance took over).
    /// No event and no state check: the change already happened, on the instance that made it
    /// (which delivered its events); this session only learns the result, even before activation.
    public mutating func adoptStored(_ accessory: Accessory) {
        accessories[accessory.id] = accessory
    }

    /// Forgets an accessory storage no longer holds (removed by another bridge instance), with no
    /// event, for the reason ``adoptStored(_:)`` gives.
    /// - Returns: the accessory it knew, nil when it knew none.
    @discardableResult
    public mutating func discardStored(_ id: BluetoothAddress) -> Accessory? {
        accessories.removeValue(forKey: id)
    }

    private func awaiting(_ id: BluetoothAddress) throws(SetupError) -> Accessory {
        try requireActive()
        guard let accessory = accessories[id] else { throw SetupError(.invalidRequest, "unknown accessory \(id)") }
        guard accessory.state == .awaitingAuthorization else {
            throw SetupError(.invalidRequest, "accessory \(id) is \(accessory.state.name), not awaiting authorization")
        }
        return accessory
    }

    private func makeAccessory(id: BluetoothAddress, name: String, product: Product, state: Accessory.State, ssid: String?) -> Accessory {
        let bridging = product.descriptor.supportedOptions.contains(.bluetoothTransportBridging)
        return Accessory(
            id: id, displayName: name, product: product.name, descriptor: product.descriptor, state: state,
            ssid: ssid ?? product.descriptor.ssid, bluetoothTransportBridgingIdentifier: bridging ? id.bytes : nil)
    }
}
