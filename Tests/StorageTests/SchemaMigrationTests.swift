import AccessoryKit
import Foundation
import Testing

@testable import Storage

@Suite("Schema versions: migrations, newer and foreign databases")
struct SchemaMigrationTests {
    typealias F = StoreFixtures

    /// Version 1 as it shipped, written out here by hand so the test does not depend on the
    /// migration code it checks.
    static let version1 = """
        PRAGMA application_id = 1633772146;
        CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) STRICT, WITHOUT ROWID;
        CREATE TABLE accessories (
            id INTEGER PRIMARY KEY NOT NULL, display_name TEXT NOT NULL, product TEXT NOT NULL,
            state INTEGER NOT NULL, bluetooth_identifier TEXT NOT NULL, ssid TEXT,
            bridging_identifier BLOB, descriptor TEXT NOT NULL, updated_at INTEGER NOT NULL) STRICT;
        CREATE TABLE registrations (
            accessory_id INTEGER PRIMARY KEY NOT NULL
                REFERENCES accessories(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
            capabilities INTEGER NOT NULL, placement TEXT, primary_source INTEGER,
            secondary_source INTEGER, invalidated INTEGER NOT NULL, updated_at INTEGER NOT NULL) STRICT;
        INSERT INTO accessories VALUES (176681009545217, 'Buds', 'Acme Buds', 20,
            'AAB1D6E0-0000-8000-8000-A0B0C0D00001', NULL, x'010203040506',
            '{"company":76,"options":3,"service":"0000FE2C-0000-1000-8000-00805F9B34FB"}', 0);
        INSERT INTO registrations VALUES (176681009545217, 3, 'inEar', 4096, NULL, 0, 0);
        INSERT INTO meta VALUES ('migration_complete', '1');
        PRAGMA user_version = 1;
        """

    /// Writes `sql` into a new database file at `path` with a bare connection.
    static func makeDatabase(_ path: String, _ sql: String) throws {
        try AccessoryStore.createDirectory(containing: path)
        let connection = try SQLiteConnection(path: path, readOnly: false, create: true)
        try connection.execute(sql)
        connection.close()
    }

    static func pragma(_ path: String, _ name: String) throws -> String? {
        let connection = try SQLiteConnection(path: path, readOnly: true, create: false)
        defer { connection.close() }
        return try connection.scalar("PRAGMA \(name)")
    }

    @Test("a version 1 database is migrated to the current version and keeps its data")
    func migratesVersion1() throws {
        let directory = TemporaryDirectory()
        let path = directory.database()
        try Self.makeDatabase(path, Self.version1)
        #expect(StoreSchema.currentVersion > 1)

        let store = try AccessoryStore(path: path)
        let id = BluetoothAddress(rawValue: 176_681_009_545_217)
        let expected = Accessory(
            id: id, displayName: "Buds", product: "Acme Buds",
            descriptor: DiscoveryDescriptor(
                bluetoothCompanyIdentifier: 0x004C, bluetoothServiceUUID: BluetoothUUID("FE2C"),
                supportedOptions: [.bluetoothPairingLE, .bluetoothTransportBridging]),
            state: .authorized, bluetoothTransportBridgingIdentifier: [1, 2, 3, 4, 5, 6])
        let state = try store.load()
        #expect(state.accessories == [expected])
        #expect(
            state.registrations == [
                id: Registration(
                    configuration: .init(
                        devicePlacement: .inEar, deviceCapabilities: [.audioSwitching, .placement],
                        primaryAudioSourceDeviceIdentifier: BluetoothAddress(rawValue: 4096)))
            ])
        #expect(state.migrationComplete)
        // The table version 2 added works, and the store is now in WAL mode.
        try store.saveSources([BluetoothAddress(rawValue: 4096)], for: id)
        #expect(try store.loadSources() == [id: [BluetoothAddress(rawValue: 4096)]])
        let version = try store.withConnection { connection throws(StorageError) in try connection.integer("PRAGMA user_version") }
        #expect(version == StoreSchema.currentVersion)
        #expect(store.integrityCheck() == [])
        store.close()
        #expect(try Self.pragma(path, "journal_mode") == "wal")
    }

    @Test("migrations are ordered, consecutive and start at 1")
    func migrationList() {
        #expect(StoreSchema.migrations.map(\.version) == Array(1...StoreSchema.currentVersion))
    }

    @Test("a database from a newer aabridge is refused and left untouched")
    func newerSchemaRefused() throws {
        let directory = TemporaryDirectory()
        let path = directory.database()
        let newer = StoreSchema.currentVersion + 1
        try Self.makeDatabase(path, Self.version1 + "\nPRAGMA user_version = \(newer);")
        let error = #expect(throws: StorageError.self) { try AccessoryStore(path: path) }
        #expect(error?.code == .newerSchema)
        #expect(error?.message.contains("\(newer)") == true)
        #expect(error?.message.contains(path) == true)
        #expect(try Self.pragma(path, "user_version") == "\(newer)")
        // Not even switched to WAL.
        #expect(try Self.pragma(path, "journal_mode") == "delete")
        #expect(throws: StorageError.self) { try AccessoryStore(path: path, mode: .readOnly) }
    }

    @Test(
        "another application's database is refused",
        arguments: [
            "PRAGMA application_id = 42;",
            "CREATE TABLE things (x INTEGER);",
        ])
    func foreignDatabase(sql: String) throws {
        let directory = TemporaryDirectory()
        let path = directory.database()
        try Self.makeDatabase(path, sql)
        let error = #expect(throws: StorageError.self) { try AccessoryStore(path: path) }
        #expect(error?.code == .notAStore)
    }

    @Test("a file that is not a SQLite database (text, binary) is not an aabridge database, not a damaged one")
    func notADatabase() throws {
        for contents in [Data(repeating: 0x41, count: 4096), Data("mqtt:\n  server: mqtt://localhost:1883\n".utf8)] {
            let directory = TemporaryDirectory()
            let path = directory.database()
            try AccessoryStore.createDirectory(containing: path)
            #expect(FileManager.default.createFile(atPath: path, contents: contents))
            for mode in [AccessoryStore.Mode.readWrite, .readOnly] {
                let error = #expect(throws: StorageError.self) { try AccessoryStore(path: path, mode: mode) }
                #expect(error?.code == .notAStore)
                #expect(error?.message.contains("\(path) is not an aabridge database") == true, "\(error?.message ?? "")")
                #expect(error?.message.contains("damaged") == false, "\(error?.message ?? "")")
            }
            #expect(FileManager.default.contents(atPath: path) == contents, "the file was not changed")
        }
    }

    @Test("an aabridge database whose header is damaged is reported as damaged: restore a backup")
    func damagedHeader() throws {
        let directory = TemporaryDirectory()
        let path = directory.database()
        let store = try AccessoryStore(path: path)
        try store.apply([.upsertAccessory(F.accessory(1))])
        store.close()
        // Overwrite the "SQLite format 3" magic; aabridge's application id (offset 68) stays.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.write(contentsOf: Data(repeating: 0, count: 16))
        try handle.close()
        let error = #expect(throws: StorageError.self) { try AccessoryStore(path: path) }
        #expect(error?.code == .corrupt)
        #expect(error?.message.contains("\(path) is an aabridge database whose header is damaged") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("restore a backup") == true)
    }

    @Test("a damaged row is reported as corrupt, naming the accessory")
    func damagedRow() throws {
        let directory = TemporaryDirectory()
        let path = directory.database()
        let store = try AccessoryStore(path: path)
        try store.apply([.upsertAccessory(F.full)])
        try store.withConnection { connection throws(StorageError) in
            try connection.execute("UPDATE accessories SET descriptor = '{\"service\":\"zz\"}'")
        }
        let error = #expect(throws: StorageError.self) { try store.load() }
        #expect(error?.code == .corrupt)
        #expect(error?.message.contains(F.full.id.description) == true)
    }

    @Test("a directory that cannot be created fails with .cannotOpen and the path")
    func cannotCreateDirectory() throws {
        let directory = TemporaryDirectory()
        let blocker = directory.path + "/file"
        #expect(FileManager.default.createFile(atPath: blocker, contents: Data()))
        let error = #expect(throws: StorageError.self) { try AccessoryStore(path: blocker + "/data/aabridge.sqlite3") }
        #expect(error?.code == .cannotOpen)
        #expect(error?.message.contains(blocker) == true)
    }
}
