import AccessoryKit

/// A result row as the decoders read it, from SQLite or PostgreSQL: both stores keep the same
/// columns, so one decoder per table turns a row back into domain values for both.
protocol StoredRow {
    func integer(_ column: Int32) -> Int64
    func optionalInteger(_ column: Int32) -> Int64?
    func text(_ column: Int32) -> String?
    /// A BLOB (SQLite) or BYTEA (PostgreSQL) column; nil for NULL.
    func blob(_ column: Int32) -> [UInt8]?
    /// An INTEGER 0/1 (SQLite) or BOOLEAN (PostgreSQL) column.
    func flag(_ column: Int32) -> Bool
}

extension SQLiteConnection.Row: StoredRow {
    func flag(_ column: Int32) -> Bool { integer(column) != 0 }
}

extension PostgresRow: StoredRow {
    func blob(_ column: Int32) -> [UInt8]? { bytes(column) }
    func flag(_ column: Int32) -> Bool { bool(column) }
}

/// The queries `load` runs, the same text in both SQL dialects, and the decoding of their rows.
enum StoredRows {
    static let accessories = """
        SELECT id, display_name, product, state, bluetooth_identifier, ssid, bridging_identifier, descriptor
        FROM accessories ORDER BY id
        """
    static let registrations =
        "SELECT accessory_id, capabilities, placement, primary_source, secondary_source, invalidated FROM registrations"
    static let identities =
        "SELECT accessory_id, irk, encryption_key, followed_address, irk_order, profile_model, profile_colour, last_room FROM identities"
    static let sources = "SELECT accessory_id, source FROM sources ORDER BY accessory_id, position"
    /// The same rows for one accessory (`$1`), for ``AccessoryStorage/load(accessories:)``.
    static let accessory = """
        SELECT id, display_name, product, state, bluetooth_identifier, ssid, bridging_identifier, descriptor
        FROM accessories WHERE id = $1
        """
    static let registration =
        "SELECT accessory_id, capabilities, placement, primary_source, secondary_source, invalidated FROM registrations WHERE accessory_id = $1"
    static let identity =
        "SELECT accessory_id, irk, encryption_key, followed_address, irk_order, profile_model, profile_colour, last_room FROM identities WHERE accessory_id = $1"
    static let homeSources = "SELECT accessory_id, source FROM home_sources ORDER BY accessory_id, position"
    static let homeSourcesOfOne = "SELECT accessory_id, source FROM home_sources WHERE accessory_id = $1 ORDER BY position"
    static let aliases = "SELECT accessory_id, alias FROM aliases"
    static let alias = "SELECT accessory_id, alias FROM aliases WHERE accessory_id = $1"
    static let sourceNames = "SELECT source, name FROM source_names"

    static func address(_ value: Int64) -> BluetoothAddress { BluetoothAddress(rawValue: UInt64(bitPattern: value)) }

    /// Every accessory's state, or with `ids` only theirs (one query per table and accessory),
    /// and the migration flag, through the store's `run(sql, id, row)`: it runs `sql` with `id`
    /// as `$1` (no parameter when nil) and hands each result row to `row`.
    static func readState<Row: StoredRow>(
        location: String, only ids: [BluetoothAddress]?,
        run: (String, BluetoothAddress?, (Row) throws(StorageError) -> Void) throws(StorageError) -> Void
    ) throws(StorageError) -> RestoredState {
        var state = RestoredState()
        var descriptors: [String: DiscoveryDescriptor] = [:]
        // Every row, or each accessory's rows.
        let selections: [(all: String, one: String)] = [
            (accessories, accessory), (registrations, registration), (identities, identity), (homeSources, homeSourcesOfOne),
            (aliases, alias),
        ]
        for (table, selection) in selections.enumerated() {
            let read = { (row: Row) throws(StorageError) in
                switch table {
                case 0: state.accessories.append(try Self.accessory(row, location: location, descriptors: &descriptors))
                case 1:
                    let (id, registration) = try Self.registration(row, location: location)
                    state.registrations[id] = registration
                case 2: try Self.identity(row, location: location, into: &state)
                // In position order: each row is the next home source of its accessory.
                case 3: state.homeSources[address(row.integer(0)), default: []].append(address(row.integer(1)))
                default: state.aliases[address(row.integer(0))] = address(row.integer(1))
                }
            }
            guard let ids else {
                try run(selection.all, nil, read)
                continue
            }
            for id in ids { try run(selection.one, id, read) }
        }
        try run("SELECT value FROM meta WHERE key = 'migration_complete'", nil) { (row: Row) throws(StorageError) in
            if row.text(0) == "1" { state.migrationComplete = true }
        }
        try run(sourceNames, nil) { (row: Row) throws(StorageError) in
            if let name = row.text(1) { state.sourceNames[address(row.integer(0))] = name }
        }
        return state
    }

    /// The error for a row that cannot be decoded, naming the accessory and the field.
    static func damaged(_ location: String, _ id: BluetoothAddress, _ what: String) -> StorageError {
        StorageError(
            .corrupt, message: "\(location): the stored \(what) of accessory \(id) cannot be read; restore a backup or remove the accessory"
        )
    }

    /// A row of ``accessories``. Accessories of one product share one descriptor text: each
    /// text is decoded once (`descriptors`).
    static func accessory(
        _ row: some StoredRow, location: String, descriptors: inout [String: DiscoveryDescriptor]
    ) throws(StorageError) -> Accessory {
        let id = address(row.integer(0))
        guard let stateValue = Int(exactly: row.integer(3)), let accessoryState = Accessory.State(rawValue: stateValue) else {
            throw damaged(location, id, "authorization state")
        }
        guard let identifierText = row.text(4), let identifier = BluetoothUUID(identifierText) else {
            throw damaged(location, id, "bluetooth identifier")
        }
        guard let descriptorText = row.text(7), let descriptor = descriptors[descriptorText] ?? DescriptorRecord.decode(descriptorText)
        else {
            throw damaged(location, id, "discovery descriptor")
        }
        descriptors[descriptorText] = descriptor
        return Accessory(
            id: id, displayName: row.text(1) ?? "", product: row.text(2) ?? "", descriptor: descriptor,
            state: accessoryState, bluetoothIdentifier: identifier, ssid: row.text(5),
            bluetoothTransportBridgingIdentifier: row.blob(6))
    }

    /// A row of ``registrations``.
    static func registration(_ row: some StoredRow, location: String) throws(StorageError) -> (BluetoothAddress, Registration) {
        let id = address(row.integer(0))
        guard let raw = UInt8(exactly: row.integer(1)) else { throw damaged(location, id, "registration capabilities") }
        var placement: AccessoryControlDevice.Placement?
        if let text = row.text(2) {
            guard let value = AccessoryControlDevice.Placement(rawValue: text) else {
                throw damaged(location, id, "registration placement")
            }
            placement = value
        }
        let configuration = AccessoryControlDevice.Configuration(
            devicePlacement: placement, deviceCapabilities: .init(rawValue: raw),
            primaryAudioSourceDeviceIdentifier: row.optionalInteger(3).map(address),
            secondaryAudioSourceDeviceIdentifier: row.optionalInteger(4).map(address))
        return (id, Registration(configuration: configuration, isInvalidated: row.flag(5)))
    }

    /// A row of ``identities``, into the state's keys and followed addresses.
    static func identity(_ row: some StoredRow, location: String, into state: inout RestoredState) throws(StorageError) {
        let id = address(row.integer(0))
        func key(_ column: Int32) throws(StorageError) -> AccessoryKey? {
            guard let bytes = row.blob(column) else { return nil }
            guard let key = AccessoryKey(bytes: bytes) else { throw damaged(location, id, "key") }
            return key
        }
        var order: IRKOrder = .notYet
        if let text = row.text(4) {
            guard let stored = IRKOrder(rawValue: text), stored != .notYet else { throw damaged(location, id, "IRK byte order") }
            order = stored
        }
        let irk = try key(1)
        let keys = AccessoryKeys(irk: irk, encryptionKey: try key(2), irkOrder: irk == nil ? .asGiven : order)
        if !keys.isEmpty { state.keys[id] = keys }
        if let followed = row.optionalInteger(3) { state.followedAddresses[id] = address(followed) }
        var trace = AccessoryTrace(room: row.text(7))
        if let model = row.optionalInteger(5) {
            guard let model = UInt16(exactly: model) else { throw damaged(location, id, "proximity model") }
            let colour = try row.optionalInteger(6).map { value throws(StorageError) -> UInt8 in
                guard let colour = UInt8(exactly: value) else { throw damaged(location, id, "proximity colour") }
                return colour
            }
            trace.profile = ProximityProfile(model: model, colour: colour)
        }
        if !trace.isEmpty { state.traces[id] = trace }
    }
}
