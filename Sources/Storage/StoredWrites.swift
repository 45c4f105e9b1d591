import AccessoryKit

/// A statement parameter as ``StoredWrites`` builds it, for SQLite or PostgreSQL: the two
/// stores keep the same columns, and differ only in how a blob and a flag are typed.
protocol StoredValue {
    static var null: Self { get }
    static func integer(_ value: Int64) -> Self
    static func text(_ value: String) -> Self
    /// A BLOB (SQLite) or BYTEA (PostgreSQL) value.
    static func blob(_ value: [UInt8]) -> Self
    /// An INTEGER 0/1 (SQLite) or BOOLEAN (PostgreSQL) value.
    static func flag(_ value: Bool) -> Self
}

extension SQLiteConnection.Value: StoredValue {
    static func flag(_ value: Bool) -> Self { .integer(value ? 1 : 0) }
}

extension PostgresValue: StoredValue {
    static func blob(_ value: [UInt8]) -> Self { .bytes(value) }
    static func flag(_ value: Bool) -> Self { .bool(value) }
}

/// The SQL of each storage write, the same text for both stores, and its parameters. The
/// parameters are written `$1`, `$2`, ... in order: PostgreSQL's syntax, which SQLite reads
/// as named parameters numbered in order of appearance, so positional binding holds for both.
enum StoredWrites {
    /// The statements for `write` at `now` (milliseconds since 1970, the rows' `updated_at`),
    /// in order: one, but for a list replaced (a delete, then a row per entry).
    static func statements<Value: StoredValue>(_ write: StorageWrite, now: Int64) -> [(sql: String, parameters: [Value])] {
        switch write {
        case .saveHomeSources(let id, let sources):
            let rows = sources.enumerated().map { position, source -> (sql: String, parameters: [Value]) in
                (
                    "INSERT INTO home_sources (accessory_id, position, source) VALUES ($1, $2, $3)",
                    [value(id), .integer(Int64(position)), value(source)]
                )
            }
            return [("DELETE FROM home_sources WHERE accessory_id = $1", [value(id)])] + rows
        case .saveAlias(let id, let alias?):
            return [
                (
                    "INSERT INTO aliases (accessory_id, alias) VALUES ($1, $2) ON CONFLICT (accessory_id) DO UPDATE SET alias = excluded.alias",
                    [value(id), value(alias)]
                )
            ]
        case .saveAlias(let id, nil):
            return [("DELETE FROM aliases WHERE accessory_id = $1", [value(id)])]
        case .saveSourceName(let source, let name?):
            return [
                (
                    """
                    INSERT INTO source_names (source, name, updated_at) VALUES ($1, $2, $3)
                    ON CONFLICT (source) DO UPDATE SET name = excluded.name, updated_at = excluded.updated_at
                    """,
                    [value(source), .text(name), .integer(now)]
                )
            ]
        case .saveSourceName(let source, nil):
            return [("DELETE FROM source_names WHERE source = $1", [value(source)])]

        case .upsertAccessory(let accessory):
            // An upsert, not SQLite's INSERT OR REPLACE: REPLACE deletes the row first, which
            // would cascade to the accessory's registration and sources.
            return [
                (
                    """
                    INSERT INTO accessories (id, display_name, product, state, bluetooth_identifier, ssid, bridging_identifier, descriptor, updated_at)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                    ON CONFLICT (id) DO UPDATE SET display_name = excluded.display_name, product = excluded.product,
                        state = excluded.state, bluetooth_identifier = excluded.bluetooth_identifier, ssid = excluded.ssid,
                        bridging_identifier = excluded.bridging_identifier, descriptor = excluded.descriptor,
                        updated_at = excluded.updated_at
                    """,
                    [
                        value(accessory.id), .text(accessory.displayName), .text(accessory.product),
                        .integer(Int64(accessory.state.rawValue)), .text(accessory.bluetoothIdentifier.uuidString),
                        value(accessory.ssid), accessory.bluetoothTransportBridgingIdentifier.map { .blob($0) } ?? .null,
                        .text(DescriptorRecord.encode(accessory.descriptor)), .integer(now),
                    ]
                )
            ]
        case .deleteAccessory(let id):
            // The registration, identity and sources go with it (ON DELETE CASCADE).
            return [("DELETE FROM accessories WHERE id = $1", [value(id)])]
        case .upsertRegistration(let id, let registration):
            let configuration = registration.configuration
            return [
                (
                    """
                    INSERT INTO registrations (accessory_id, capabilities, placement, primary_source, secondary_source, invalidated, updated_at)
                    VALUES ($1, $2, $3, $4, $5, $6, $7)
                    ON CONFLICT (accessory_id) DO UPDATE SET capabilities = excluded.capabilities, placement = excluded.placement,
                        primary_source = excluded.primary_source, secondary_source = excluded.secondary_source,
                        invalidated = excluded.invalidated, updated_at = excluded.updated_at
                    """,
                    [
                        value(id), .integer(Int64(configuration.deviceCapabilities.rawValue)),
                        value(configuration.devicePlacement?.rawValue),
                        value(configuration.primaryAudioSourceDeviceIdentifier),
                        value(configuration.secondaryAudioSourceDeviceIdentifier),
                        .flag(registration.isInvalidated), .integer(now),
                    ]
                )
            ]
        case .deleteRegistration(let id):
            return [("DELETE FROM registrations WHERE accessory_id = $1", [value(id)])]
        case .saveKeys(let id, let keys):
            // The order is stored once found (NULL: not yet, or no IRK).
            let order: String? = keys.irk == nil || keys.irkOrder == .notYet ? nil : keys.irkOrder.rawValue
            return [
                (
                    """
                    INSERT INTO identities (accessory_id, irk, encryption_key, irk_order, updated_at) VALUES ($1, $2, $3, $4, $5)
                    ON CONFLICT (accessory_id) DO UPDATE SET irk = excluded.irk, encryption_key = excluded.encryption_key,
                        irk_order = excluded.irk_order, updated_at = excluded.updated_at
                    """,
                    [
                        value(id), keys.irk.map { .blob($0.bytes) } ?? .null, keys.encryptionKey.map { .blob($0.bytes) } ?? .null,
                        value(order), .integer(now),
                    ]
                )
            ]
        case .saveTrace(let id, let trace):
            return [
                (
                    """
                    INSERT INTO identities (accessory_id, profile_model, profile_colour, last_room, updated_at) VALUES ($1, $2, $3, $4, $5)
                    ON CONFLICT (accessory_id) DO UPDATE SET profile_model = excluded.profile_model,
                        profile_colour = excluded.profile_colour, last_room = excluded.last_room, updated_at = excluded.updated_at
                    """,
                    [
                        value(id), trace.profile.map { .integer(Int64($0.model)) } ?? .null,
                        trace.profile?.colour.map { .integer(Int64($0)) } ?? .null, value(trace.room), .integer(now),
                    ]
                )
            ]
        case .saveFollowedAddress(let id, let followed):
            return [
                (
                    """
                    INSERT INTO identities (accessory_id, followed_address, updated_at) VALUES ($1, $2, $3)
                    ON CONFLICT (accessory_id) DO UPDATE SET followed_address = excluded.followed_address,
                        updated_at = excluded.updated_at
                    """,
                    [value(id), value(followed), .integer(now)]
                )
            ]
        case .migrationComplete:
            return [
                (
                    """
                    INSERT INTO meta (key, value) VALUES ('migration_complete', '1')
                    ON CONFLICT (key) DO UPDATE SET value = excluded.value
                    """,
                    []
                )
            ]
        }
    }

    /// Replacing an accessory's ordered sources: this delete, then one insert per source.
    static let deleteSources = "DELETE FROM sources WHERE accessory_id = $1"
    static let insertSource = "INSERT INTO sources (accessory_id, position, source) VALUES ($1, $2, $3)"

    static func sourceRows<Value: StoredValue>(_ sources: [BluetoothAddress], for accessory: BluetoothAddress) -> [[Value]] {
        sources.enumerated().map { position, source in [value(accessory), .integer(Int64(position)), value(source)] }
    }

    static func value<Value: StoredValue>(_ address: BluetoothAddress) -> Value { .integer(Int64(bitPattern: address.rawValue)) }

    static func value<Value: StoredValue>(_ address: BluetoothAddress?) -> Value { address.map { value($0) } ?? .null }

    static func value<Value: StoredValue>(_ text: String?) -> Value { text.map { .text($0) } ?? .null }
}
