import AccessoryKit
import Foundation
import LocalProcess
import Synchronization
import Testing

@testable import Storage

/// The same writes through both stores: what PostgreSQL restores must be what SQLite restores.
/// Each step is one `apply` call: writes and the source lists committed with them.
enum SharedWrites {
    typealias F = StoreFixtures
    static let irk = AccessoryKey(bytes: Array(0..<16))!
    static let encryption = AccessoryKey(bytes: (240...255).map { UInt8($0) })!
    /// Every byte value, so the bytea encoding is exercised for each.
    static let allBytes = Accessory(
        id: F.address(4), displayName: "Ünïcödé 名前 🎧 'quote' \\backslash", product: "Bytes", descriptor: F.fullDescriptor,
        state: .authorized, ssid: "ssid with spaces", bluetoothTransportBridgingIdentifier: (0...255).map { UInt8($0) })

    static let steps: [(writes: [StorageWrite], sources: [BluetoothAddress: [BluetoothAddress]])] = [
        (F.everything, [:]),
        ([.upsertAccessory(allBytes), .saveKeys(allBytes.id, AccessoryKeys(irk: irk, encryptionKey: encryption))], [:]),
        ([.saveKeys(F.full.id, AccessoryKeys(encryptionKey: encryption)), .saveFollowedAddress(F.full.id, F.address(0x77))], [:]),
        ([], [F.full.id: [F.address(0x100), F.address(0x101), F.address(0x102)], F.bare.id: [F.address(0x200)]]),
        ([.upsertRegistration(F.full.id, F.bareRegistration)], [F.bare.id: []]),
        ([.deleteRegistration(F.unauthorized.id), .deleteAccessory(F.unauthorized.id)], [:]),
        (
            [.upsertAccessory(F.unauthorized), .saveFollowedAddress(F.unauthorized.id, F.address(0x99))],
            [F.unauthorized.id: [F.address(1)]]
        ),
        ([.deleteAccessory(F.unauthorized.id)], [:]),
        // What the user said that lasts: replaced lists, removed entries, a Unicode name.
        (
            [
                .saveHomeSources(F.full.id, [F.address(0x300), F.address(0x301)]), .saveAlias(F.full.id, F.address(0x400)),
                .saveSourceName(F.address(0x300), "Ünïcödé phone 'quote'"), .saveSourceName(F.address(0x302), "gone"),
            ], [:]
        ),
        (
            [
                .saveHomeSources(F.full.id, [F.address(0x301)]), .saveSourceName(F.address(0x302), nil),
                .saveHomeSources(F.bare.id, [F.address(0x300)]), .saveAlias(F.bare.id, F.address(0x401)), .saveAlias(F.bare.id, nil),
                .saveHomeSources(F.bare.id, [F.address(0x302), F.address(0x300)]),
            ], [:]
        ),
        // Found again after a night: the key's byte order, the profile and the last room.
        (
            [
                .saveKeys(F.bare.id, AccessoryKeys(irk: irk, irkOrder: .reversed)),
                .saveTrace(F.full.id, AccessoryTrace(profile: ProximityProfile(model: 0x2014, colour: 3), room: "bedroom 'quoted'")),
                .saveTrace(F.bare.id, AccessoryTrace(profile: ProximityProfile(model: 0x200A, colour: nil))),
                .saveTrace(F.full.id, AccessoryTrace(profile: ProximityProfile(model: 0x2014, colour: 3), room: "kitchen")),
            ], [:]
        ),
    ]

    static func apply(to store: any AccessoryStorage) throws {
        for step in steps { try store.apply(step.writes, sources: step.sources) }
    }
}

@Suite("PostgresStore: the same state and guarantees as SQLite, on a real PostgreSQL")
struct PostgresStoreTests {
    typealias F = StoreFixtures

    /// A PostgreSQL store and a SQLite store, each given ``SharedWrites``.
    static func withBothStores(_ body: (PostgresStore, AccessoryStore, LocalPostgres) throws -> Void) throws {
        let server = try LocalPostgres()
        let postgres = try PostgresStore(url: server.url)
        defer { postgres.close() }
        let directory = TemporaryDirectory()
        let sqlite = try AccessoryStore(path: directory.database())
        defer { sqlite.close() }
        try SharedWrites.apply(to: postgres)
        try SharedWrites.apply(to: sqlite)
        try body(postgres, sqlite, server)
    }

    @Test("every write kind and the source lists restore exactly what the SQLite store restores")
    func sameStateAsSQLite() throws {
        try Self.withBothStores { postgres, sqlite, server in
            let restored = try postgres.load()
            #expect(restored == (try sqlite.load()))
            #expect(try postgres.loadSources() == (try sqlite.loadSources()))
            // Spot checks, so that a failure names the field (and the comparison is not of two empty states).
            #expect(restored.accessories.map(\.id) == [F.full.id, F.bare.id, SharedWrites.allBytes.id])
            let bytes = try #require(restored.accessories.first { $0.id == SharedWrites.allBytes.id })
            #expect(bytes.bluetoothTransportBridgingIdentifier == (0...255).map { UInt8($0) })
            #expect(bytes.displayName == SharedWrites.allBytes.displayName)
            #expect(restored.keys[SharedWrites.allBytes.id] == AccessoryKeys(irk: SharedWrites.irk, encryptionKey: SharedWrites.encryption))
            #expect(restored.followedAddresses[F.full.id] == F.address(0x77))
            #expect(restored.keys[F.bare.id]?.irkOrder == .reversed)
            #expect(restored.traces[F.full.id] == AccessoryTrace(profile: ProximityProfile(model: 0x2014, colour: 3), room: "kitchen"))
            #expect(restored.traces[F.bare.id] == AccessoryTrace(profile: ProximityProfile(model: 0x200A, colour: nil)))
            #expect(restored.registrations[F.full.id] == F.bareRegistration)
            #expect(restored.migrationComplete)
            #expect(try postgres.loadSources() == [F.full.id: [F.address(0x100), F.address(0x101), F.address(0x102)]])
            #expect(postgres.committedTransactions == SharedWrites.steps.count)
            #expect(postgres.location == server.url)
        }
    }

    @Test("home sources (in order), aliases and source names restore the same in both stores; an accessory removed takes its own")
    func homeSourcesAliasesNames() throws {
        try Self.withBothStores { postgres, sqlite, _ in
            for store in [postgres, sqlite] as [any AccessoryStorage] {
                let restored = try store.load()
                #expect(restored.homeSources == [F.full.id: [F.address(0x301)], F.bare.id: [F.address(0x302), F.address(0x300)]])
                #expect(restored.aliases == [F.full.id: F.address(0x400)])
                #expect(restored.sourceNames == [F.address(0x300): "Ünïcödé phone 'quote'"])
                let one = try store.load(accessories: [F.bare.id])
                #expect(one.homeSources == [F.bare.id: [F.address(0x302), F.address(0x300)]] && one.aliases.isEmpty)
                // An alias is one accessory's.
                #expect(throws: StorageError.self) { try store.apply([.saveAlias(F.bare.id, F.address(0x400))], sources: [:]) }
                try store.apply([.deleteAccessory(F.full.id)], sources: [:])
                let after = try store.load()
                #expect(after.homeSources[F.full.id] == nil && after.aliases.isEmpty)
                #expect(after.sourceNames.count == 1, "names belong to the sources, not to an accessory")
            }
        }
    }

    @Test("load(accessories:) gives those accessories' part of load(), in both stores; one not stored is absent")
    func loadSome() throws {
        try Self.withBothStores { postgres, sqlite, _ in
            let wanted = [F.full.id, SharedWrites.allBytes.id, F.address(0xDEAD)]
            for store in [postgres, sqlite] as [any AccessoryStorage] {
                let all = try store.load()
                let some = try store.load(accessories: wanted)
                #expect(some.accessories == all.accessories.filter { wanted.contains($0.id) })
                #expect(some.accessories.map(\.id) == [F.full.id, SharedWrites.allBytes.id])
                #expect(some.registrations == all.registrations.filter { wanted.contains($0.key) })
                #expect(some.keys == all.keys.filter { wanted.contains($0.key) })
                #expect(some.followedAddresses == all.followedAddresses.filter { wanted.contains($0.key) })
                #expect(some.keys[SharedWrites.allBytes.id] != nil && some.followedAddresses[F.full.id] != nil, "not two empty states")
                #expect(try store.load(accessories: []).accessories.isEmpty)
            }
        }
    }

    @Test("a registration for an accessory that is not stored rolls the whole apply back with .constraint")
    func constraintRollsBackEverything() throws {
        let server = try LocalPostgres()
        let store = try PostgresStore(url: server.url)
        try store.apply([.upsertAccessory(F.full)], sources: [:])
        var thrown: StorageError?
        do {
            try store.apply(
                [.upsertAccessory(F.bare), .upsertRegistration(F.address(0xDEAD), F.fullRegistration), .migrationComplete],
                sources: [F.full.id: [F.address(5)]])
        } catch { thrown = error }
        #expect(thrown?.code == .constraint)
        #expect(thrown?.sqlState == "23503")
        #expect(thrown?.message.contains("23503") == true)
        #expect(try store.load() == RestoredState(accessories: [F.full]))
        #expect(try store.loadSources().isEmpty)
        // The connection is usable after the rollback.
        try store.apply([.upsertAccessory(F.bare)], sources: [:])
        #expect(try store.load().accessories.count == 2)
    }

    @Test("three stores opening a fresh database at once migrate it exactly once, each version recorded")
    func concurrentMigration() throws {
        let server = try LocalPostgres()
        let errors = Mutex<[String]>([])
        // Three threads at once, as three instances starting together.
        DispatchQueue.concurrentPerform(iterations: 3) { _ in
            do {
                let store = try PostgresStore(url: server.url)
                _ = try store.load()
                store.close()
            } catch {
                errors.withLock { $0.append("\(error)") }
            }
        }
        #expect(errors.withLock { $0 } == [])
        let connection = try PostgresConnection(url: server.url)
        var versions: [Int64] = []
        try connection.run("SELECT version FROM schema_migrations ORDER BY version") { row throws(StorageError) in
            versions.append(row.integer(0))
        }
        #expect(versions == PostgresSchema.migrations.map(\.version))
        #expect(versions == [1, 2, 3, 4])
        // The cluster's tables came with version 2, home sources, aliases and names with 3.
        var tables: [String] = []
        try connection.run(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name"
        ) { row throws(StorageError) in tables.append(row.text(0) ?? "") }
        #expect(
            tables == [
                "accessories", "aliases", "cluster_members", "cluster_partitions", "home_sources", "identities", "meta", "registrations",
                "schema_migrations", "source_names", "sources",
            ])
    }

    @Test("a database migrated by a newer aabridge is refused with .newerSchema and left unchanged")
    func newerSchemaRefused() throws {
        let server = try LocalPostgres()
        try PostgresStore(url: server.url).close()
        let connection = try PostgresConnection(url: server.url)
        try connection.execute("INSERT INTO schema_migrations (version) VALUES (99); CREATE TABLE from_the_future (x INT)")
        func snapshot() throws -> [String] {
            var rows: [String] = []
            try connection.run("SELECT version::text FROM schema_migrations ORDER BY version") { row throws(StorageError) in
                rows.append(row.text(0) ?? "")
            }
            try connection.run(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name"
            ) { row throws(StorageError) in rows.append(row.text(0) ?? "") }
            return rows
        }
        let before = try snapshot()
        var thrown: StorageError?
        do { _ = try PostgresStore(url: server.url) } catch { thrown = error }
        #expect(thrown?.code == .newerSchema)
        #expect(thrown?.message.contains("schema version 99") == true)
        #expect(thrown?.message.contains("not changed") == true)
        #expect(try snapshot() == before)
    }

    @Test("apply notifies another session with its origin and every accessory touched; a rolled-back apply notifies nothing")
    func notifications() throws {
        let server = try LocalPostgres()
        let store = try PostgresStore(url: server.url, origin: "node-a")
        let listener = try PostgresConnection(url: server.url)
        try listener.execute("LISTEN \(PostgresStore.changesChannel)")
        try store.apply(
            [.upsertAccessory(F.full), .upsertAccessory(F.bare), .saveKeys(F.full.id, AccessoryKeys(irk: SharedWrites.irk))],
            sources: [F.bare.id: [F.address(9)]])
        let first = try Self.next(listener)
        #expect(first?.channel == PostgresStore.changesChannel)
        #expect(first?.payload == "node-a:A0B0C0D00001,A0B0C0D00002")
        // A failed apply: nothing is delivered for it. The next successful one's notification is the next one seen.
        #expect(throws: StorageError.self) {
            try store.apply([.upsertAccessory(F.unauthorized), .upsertRegistration(F.address(0xBAD), F.fullRegistration)], sources: [:])
        }
        try store.apply([.deleteRegistration(F.full.id)], sources: [:])
        let second = try Self.next(listener)
        #expect(second?.payload == "node-a:A0B0C0D00001")
        usleep(200_000)
        #expect(try listener.notifications() == [])
    }

    @Test("long lists of accessories are split into payloads under 7,000 bytes that together name every one")
    func notificationPayloadsSplit() {
        let ids = (0..<2_000).map { F.address(UInt64($0)) }
        let payloads = PostgresStore.notificationPayloads(origin: "instance-1", accessories: ids)
        #expect(payloads.count > 1)
        #expect(payloads.allSatisfy { $0.utf8.count < 7_000 && $0.hasPrefix("instance-1:") })
        let named = payloads.flatMap { $0.dropFirst("instance-1:".count).split(separator: ",").map(String.init) }
        #expect(named == ids.map { String($0.rawValue, radix: 16, uppercase: true) })
        #expect(PostgresStore.notificationPayloads(origin: "", accessories: [BluetoothAddress(rawValue: 0xAB)]) == [":0000000000AB"])
        #expect(PostgresStore.touched([.migrationComplete], sources: [:]).isEmpty)
    }

    @Test("a password given as a parameter logs in; a wrong one fails clearly without showing it")
    func password() throws {
        let secret = "correct horse ü 'battery'"
        let server = try LocalPostgres(.init(password: secret))
        let store = try PostgresStore(url: server.url, password: secret)
        try store.apply([.upsertAccessory(F.full)], sources: [:])
        #expect(try store.load().accessories == [F.full])
        let wrong = "wrong-password-4711"
        var thrown: StorageError?
        do { _ = try PostgresStore(url: server.url, password: wrong) } catch { thrown = error }
        #expect(thrown?.code == .cannotOpen)
        #expect(thrown?.message.contains("password authentication failed") == true)
        #expect(thrown?.message.contains("storage.password") == true)
        #expect(thrown?.message.contains(wrong) == false)
        // A password inside the URL works too, and is never shown.
        let inline = "postgresql://aabridge:\(wrong)@127.0.0.1:\(server.port)/aabridge"
        thrown = nil
        do { _ = try PostgresStore(url: inline) } catch { thrown = error }
        #expect(thrown?.code == .cannotOpen)
        #expect(thrown?.message.contains(wrong) == false)
        #expect(thrown?.message.contains("postgresql://aabridge@127.0.0.1:\(server.port)/aabridge") == true)
    }

    @Test("PostgreSQL killed: the call in flight throws .unavailable, the next reconnects, what was applied before is there")
    func serverKilledAndRestarted() throws {
        let server = try LocalPostgres()
        let store = try PostgresStore(url: server.url)
        try store.apply(
            [.upsertAccessory(F.full), .upsertRegistration(F.full.id, F.fullRegistration)], sources: [F.full.id: [F.address(7)]])
        server.kill()
        var thrown: StorageError?
        do { try store.apply([.upsertAccessory(F.bare)], sources: [:]) } catch { thrown = error }
        #expect(thrown?.code == .unavailable)
        #expect(thrown?.message.contains(server.url) == true)
        // While the server is down, each call tries to reconnect once and fails the same way.
        #expect(throws: StorageError.self) { _ = try store.load() }
        try server.start()
        try store.apply([.upsertAccessory(F.unauthorized)], sources: [:])
        let restored = try store.load()
        #expect(restored.accessories.map(\.id).contains(F.full.id))
        #expect(restored.accessories.map(\.id).contains(F.unauthorized.id))
        #expect(restored.registrations[F.full.id] == F.fullRegistration)
        #expect(try store.loadSources() == [F.full.id: [F.address(7)]])
    }

    @Test("PostgreSQL restarted (fast shutdown ends every session): the next call throws .unavailable, the one after reconnects")
    func serverRestarted() throws {
        let server = try LocalPostgres()
        let store = try PostgresStore(url: server.url)
        try store.apply([.upsertAccessory(F.full)], sources: [:])
        try server.restart()
        var thrown: StorageError?
        do { try store.apply([.upsertAccessory(F.bare)], sources: [:]) } catch { thrown = error }
        #expect(thrown?.code == .unavailable)
        try store.apply([.upsertAccessory(F.unauthorized)], sources: [:])
        #expect(try store.load().accessories.map(\.id) == [F.full.id, F.unauthorized.id])
    }

    @Test("a malformed URL and an unreachable server fail with clear errors")
    func badURL() throws {
        var thrown: StorageError?
        do { _ = try PostgresStore(url: "postgresql://user:hunter2@127.0.0.1:5432/db?nonsense=1") } catch { thrown = error }
        #expect(thrown?.code == .cannotOpen)
        #expect(thrown?.message.contains("not a valid PostgreSQL connection string") == true)
        #expect(thrown?.message.contains("nonsense") == true)
        #expect(thrown?.message.contains("hunter2") == false)
        let port = try FreePort.find()
        thrown = nil
        do { _ = try PostgresStore(url: "host=127.0.0.1 port=\(port) dbname=aabridge password=hunter2") } catch { thrown = error }
        #expect(thrown?.code == .unavailable)
        #expect(thrown?.message.contains("cannot connect to PostgreSQL at dbname=aabridge host=127.0.0.1 port=\(port)") == true)
        #expect(thrown?.message.contains("hunter2") == false)
    }

    @Test("close is idempotent; every call after it throws .closed")
    func closed() throws {
        let server = try LocalPostgres()
        let store = try PostgresStore(url: server.url)
        store.close()
        store.close()
        var thrown: StorageError?
        do { _ = try store.load() } catch { thrown = error }
        #expect(thrown?.code == .closed)
        #expect(throws: StorageError.self) { try store.apply([.migrationComplete], sources: [:]) }
    }

    @Test("values round-trip exactly through the connection: bytea of every byte, Unicode text, integers, booleans, NULL")
    func connectionValues() throws {
        let server = try LocalPostgres()
        let connection = try PostgresConnection(url: server.url)
        let bytes = (0...255).map { UInt8($0) } + [0, 0, 92, 120]
        let text = "Grüße 🎧 — \\x00 'q' \"d\" \n\t end"
        var row: [PostgresValue] = []
        try connection.run(
            "SELECT $1::bytea, $2::text, $3::bigint, $4::boolean, $5::text, $6::bytea",
            [.bytes(bytes), .text(text), .integer(Int64.min), .bool(true), .null, .bytes([])]
        ) { result throws(StorageError) in
            row = [
                result.bytes(0).map { .bytes($0) } ?? .null, result.text(1).map { .text($0) } ?? .null,
                .integer(result.integer(2)), .bool(result.bool(3)), result.isNull(4) ? .null : .text("?"),
                result.bytes(5).map { .bytes($0) } ?? .null,
            ]
        }
        #expect(row == [.bytes(bytes), .text(text), .integer(Int64.min), .bool(true), .null, .bytes([])])
        // The session durability setting a commit's acknowledgement depends on.
        var synchronousCommit: String?
        try connection.run("SHOW synchronous_commit") { result throws(StorageError) in synchronousCommit = result.text(0) }
        #expect(synchronousCommit == "on")
    }

    @Test("every session commits synchronously, also after a reconnect, whatever the role's default; connect_timeout 5 unless the URL says")
    func sessionSetup() throws {
        let server = try LocalPostgres()
        let admin = try PostgresConnection(url: server.url)
        // A role default that would acknowledge commits before they are on disk.
        try admin.execute("ALTER ROLE aabridge SET synchronous_commit = off")
        func setting(_ connection: PostgresConnection, _ name: String) throws -> String? {
            var value: String?
            try connection.run("SELECT current_setting($1)", [.text(name)]) { row throws(StorageError) in value = row.text(0) }
            return value
        }
        let connection = try PostgresConnection(url: server.url)
        #expect(try setting(connection, "synchronous_commit") == "on")
        #expect(try setting(connection, "application_name") == "aabridge")
        #expect(connection.option("connect_timeout") == "5")
        server.kill()
        #expect(throws: StorageError.self) { try connection.execute("SELECT 1") }
        #expect(!connection.isConnected)
        try server.start()
        try connection.reconnect()
        #expect(connection.isConnected)
        #expect(try setting(connection, "synchronous_commit") == "on")
        let ownTimeout = try PostgresConnection(url: server.url + "?connect_timeout=9&application_name=mine")
        #expect(ownTimeout.option("connect_timeout") == "9")
        #expect(try setting(ownTimeout, "application_name") == "mine")
    }

    @Test("the password parameter wins over one written into the URL")
    func passwordParameterWins() throws {
        let server = try LocalPostgres(.init(password: "right"))
        let store = try PostgresStore(url: "postgresql://aabridge:wrong@127.0.0.1:\(server.port)/aabridge", password: "right")
        #expect(try store.load() == RestoredState())
        #expect(store.location == server.url)
    }

    @Test("a read-only database opens, serves reads and refuses each write with .readOnly")
    func readOnlyDatabase() throws {
        let server = try LocalPostgres()
        let writer = try PostgresStore(url: server.url)
        try writer.apply([.upsertAccessory(F.full)], sources: [:])
        #expect(!writer.isReadOnly)
        writer.close()
        let admin = try PostgresConnection(url: server.url + "?dbname=postgres")
        try admin.execute("ALTER DATABASE aabridge SET default_transaction_read_only = on")
        let store = try PostgresStore(url: server.url)
        #expect(store.isReadOnly)
        #expect(try store.load().accessories == [F.full])
        var thrown: StorageError?
        do { try store.apply([.upsertAccessory(F.bare)], sources: [:]) } catch { thrown = error }
        #expect(thrown?.code == .readOnly)
        #expect(thrown?.sqlState == "25006")
    }

    @Test("the keys' columns refuse anything but 16 bytes, as in SQLite")
    func keyLengthChecked() throws {
        let server = try LocalPostgres()
        let store = try PostgresStore(url: server.url)
        try store.apply([.upsertAccessory(F.full)], sources: [:])
        let connection = try PostgresConnection(url: server.url)
        var thrown: StorageError?
        do {
            try connection.run(
                "INSERT INTO identities (accessory_id, irk, updated_at) VALUES ($1, $2, 0)",
                [.integer(Int64(F.full.id.rawValue)), .bytes(Array(repeating: 1, count: 15))])
        } catch { thrown = error }
        #expect(thrown?.code == .constraint)
        #expect(thrown?.sqlState == "23514")
    }

    @Test("the URL loses its password for log lines, in both connection string forms")
    func redaction() {
        #expect(
            PostgresConnection.redacted("postgresql://bob:s3cret@db.example:5432/aabridge") == "postgresql://bob@db.example:5432/aabridge")
        #expect(
            PostgresConnection.redacted("postgres://bob@h/db?sslmode=require&password=s3cret&connect_timeout=3")
                == "postgres://bob@h/db?connect_timeout=3&sslmode=require")
        #expect(PostgresConnection.redacted("host=h password='a b\\' c' dbname=x") == "dbname=x host=h")
        #expect(PostgresConnection.redacted("host = h  password = s3cret") == "host=h")
        #expect(PostgresConnection.redacted("host=h application_name='a b'") == "host=h application_name='a b'")
        #expect(PostgresConnection.redacted("postgresql://h1:5432,[::1]:5433/db") == "postgresql://h1:5432,[::1]:5433/db")
        #expect(PostgresConnection.redacted("postgresql:///db?host=/run/postgresql") == "postgresql:///db?host=%2Frun%2Fpostgresql")
        #expect(PostgresConnection.redacted("postgresql://h/db?password") == PostgresConnection.unparseable)
        #expect(PostgresConnection.hasInlinePassword("postgresql://bob:s3cret@h/db"))
        #expect(PostgresConnection.hasInlinePassword("host=h password=s3cret"))
        #expect(!PostgresConnection.hasInlinePassword("postgresql://bob@h/db"))
    }

    /// libpq percent-decodes a URI's parameter names too: `pass%77ord` is `password` to it
    /// (and `sslpass%77ord` is `sslpassword`, which libpq also marks secret).
    @Test("a password under a percent-encoded keyword, in userinfo or in the query, is redacted as libpq reads it")
    func percentEncodedKeyword() {
        let urls = [
            "postgresql://bob@h/db?pass%77ord=s3cret", "postgresql://bob@h/db?%70assword=s3cret",
            "postgresql://bob:s3cret@h/db?pass%77ord=s3cret", "postgresql://bob@h/db?password=s3cret",
            "postgresql://bob@h/db?sslpass%77ord=s3cret&sslmode=require", "postgresql://bob:s%33cret@h/db",
            "host=h sslpassword=s3cret user=bob",
        ]
        for url in urls {
            #expect(PostgresConnection.hasInlinePassword(url) || url.contains("sslpass"), "\(url) carries a password")
            let shown = PostgresConnection.redacted(url)
            #expect(!shown.contains("s3cret") && !shown.contains("s%33cret"), "\(url) -> \(shown)")
            #expect(shown.contains("bob"), "the rest is kept: \(shown)")
        }
        #expect(PostgresConnection.redacted("postgresql://bob@h/db?pass%77ord=s3cret") == "postgresql://bob@h/db")
    }

    /// The next notification, waiting up to five seconds.
    static func next(_ connection: PostgresConnection) throws -> PostgresNotification? {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if let first = try connection.notifications().first { return first }
            usleep(10_000)
        }
        return nil
    }
}
