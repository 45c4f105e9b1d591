/// The store's schema: an ordered list of migrations, recorded in `PRAGMA user_version`.
///
/// Each migration runs in its own transaction together with the `user_version` bump, so a
/// crash mid-upgrade leaves the previous version intact and the next start retries it.
/// Never edit a shipped migration; append a new one.
enum StoreSchema {
    /// `PRAGMA application_id` ("aabr"), so the store refuses to migrate someone else's database.
    static let applicationID: Int64 = 0x6161_6272

    /// One step from `version - 1` to `version`.
    struct Migration {
        let version: Int64
        let sql: String
    }

    /// The version this build writes.
    static var currentVersion: Int64 { migrations.last?.version ?? 0 }

    static let migrations: [Migration] = [
        // 1: accessories, registrations and the meta flags.
        Migration(
            version: 1,
            sql: """
                PRAGMA application_id = \(applicationID);
                CREATE TABLE meta (
                    key TEXT PRIMARY KEY NOT NULL,
                    value TEXT NOT NULL
                ) STRICT, WITHOUT ROWID;
                -- id is the 48-bit identity address (printf('%012X', id) shows it as in topics).
                CREATE TABLE accessories (
                    id INTEGER PRIMARY KEY NOT NULL,
                    display_name TEXT NOT NULL,
                    product TEXT NOT NULL,
                    state INTEGER NOT NULL,
                    bluetooth_identifier TEXT NOT NULL,
                    ssid TEXT,
                    bridging_identifier BLOB,
                    descriptor TEXT NOT NULL,
                    updated_at INTEGER NOT NULL
                ) STRICT;
                -- Deferred, so the writes of one engine step may arrive in any order in a transaction.
                CREATE TABLE registrations (
                    accessory_id INTEGER PRIMARY KEY NOT NULL
                        REFERENCES accessories(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
                    capabilities INTEGER NOT NULL,
                    placement TEXT,
                    primary_source INTEGER,
                    secondary_source INTEGER,
                    invalidated INTEGER NOT NULL,
                    updated_at INTEGER NOT NULL
                ) STRICT;
                """),
        // 2: the ordered connected sources per accessory (the bridge's source lists).
        Migration(
            version: 2,
            sql: """
                CREATE TABLE sources (
                    accessory_id INTEGER NOT NULL
                        REFERENCES accessories(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
                    position INTEGER NOT NULL,
                    source INTEGER NOT NULL,
                    PRIMARY KEY (accessory_id, position)
                ) STRICT, WITHOUT ROWID;
                """),
        // 3: what an accessory is recognised by behind rotating addresses: its keys (16 bytes
        // each, most significant first) and the address it was last followed to without a key.
        Migration(
            version: 3,
            sql: """
                CREATE TABLE identities (
                    accessory_id INTEGER PRIMARY KEY NOT NULL
                        REFERENCES accessories(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
                    irk BLOB CHECK (irk IS NULL OR length(irk) = 16),
                    encryption_key BLOB CHECK (encryption_key IS NULL OR length(encryption_key) = 16),
                    followed_address INTEGER,
                    updated_at INTEGER NOT NULL
                ) STRICT;
                """),
        // 4: what the user said that lasts (household.md): each accessory's home sources, in
        // order, and its alias (its public address, unique); names given to sources at run time.
        Migration(
            version: 4,
            sql: """
                CREATE TABLE home_sources (
                    accessory_id INTEGER NOT NULL
                        REFERENCES accessories(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
                    position INTEGER NOT NULL,
                    source INTEGER NOT NULL,
                    PRIMARY KEY (accessory_id, position)
                ) STRICT, WITHOUT ROWID;
                CREATE TABLE aliases (
                    accessory_id INTEGER PRIMARY KEY NOT NULL
                        REFERENCES accessories(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
                    alias INTEGER NOT NULL UNIQUE
                ) STRICT;
                CREATE TABLE source_names (
                    source INTEGER PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL,
                    updated_at INTEGER NOT NULL
                ) STRICT;
                """),
        // 5: found again after a night: which byte order of an IRK matched ('as_given',
        // 'reversed'; NULL: not yet), and what re-attaching an accessory needs (its proximity
        // model and colour, the room it was last heard in).
        Migration(
            version: 5,
            sql: """
                ALTER TABLE identities ADD COLUMN irk_order TEXT;
                ALTER TABLE identities ADD COLUMN profile_model INTEGER;
                ALTER TABLE identities ADD COLUMN profile_colour INTEGER;
                ALTER TABLE identities ADD COLUMN last_room TEXT;
                """),
    ]
}
