/// The PostgreSQL store's schema: the SQLite tables (``StoreSchema``) in PostgreSQL's types,
/// and the cluster's tables, as an ordered list of migrations recorded in `schema_migrations`.
///
/// Each migration runs in one transaction with its `schema_migrations` row, under a
/// transaction-scoped advisory lock, so instances starting together migrate exactly once and
/// a failure leaves the previous version intact. Never edit a shipped migration; append.
enum PostgresSchema {
    /// The key of the advisory lock migrations run under (`pg_advisory_xact_lock`): "aabr".
    static let migrationLock: Int64 = 0x6161_6272

    /// The version this build writes.
    static var currentVersion: Int64 { migrations.last?.version ?? 0 }

    /// Created inside each migration's transaction before the version is read, so a fresh
    /// database and one that is up to date take the same path.
    static let migrationsTable = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version INT PRIMARY KEY,
            applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
        )
        """

    static let migrations: [StoreSchema.Migration] = [
        // 1: everything SQLite's versions 1-3 hold. Ids are the 48-bit addresses (BIGINT;
        // to_hex(id) shows them); foreign keys are deferred so the writes of one engine step
        // may come in any order within a transaction, and deleting an accessory cascades.
        StoreSchema.Migration(
            version: 1,
            sql: """
                CREATE TABLE meta (
                    key TEXT PRIMARY KEY,
                    value TEXT NOT NULL
                );
                CREATE TABLE accessories (
                    id BIGINT PRIMARY KEY,
                    display_name TEXT NOT NULL,
                    product TEXT NOT NULL,
                    state INTEGER NOT NULL,
                    bluetooth_identifier TEXT NOT NULL,
                    ssid TEXT,
                    bridging_identifier BYTEA,
                    descriptor TEXT NOT NULL,
                    updated_at BIGINT NOT NULL
                );
                CREATE TABLE registrations (
                    accessory_id BIGINT PRIMARY KEY
                        REFERENCES accessories(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
                    capabilities INTEGER NOT NULL,
                    placement TEXT,
                    primary_source BIGINT,
                    secondary_source BIGINT,
                    invalidated BOOLEAN NOT NULL,
                    updated_at BIGINT NOT NULL
                );
                CREATE TABLE sources (
                    accessory_id BIGINT NOT NULL
                        REFERENCES accessories(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
                    position INTEGER NOT NULL,
                    source BIGINT NOT NULL,
                    PRIMARY KEY (accessory_id, position)
                );
                CREATE TABLE identities (
                    accessory_id BIGINT PRIMARY KEY
                        REFERENCES accessories(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
                    irk BYTEA CHECK (irk IS NULL OR octet_length(irk) = 16),
                    encryption_key BYTEA CHECK (encryption_key IS NULL OR octet_length(encryption_key) = 16),
                    followed_address BIGINT,
                    updated_at BIGINT NOT NULL
                );
                """),
        // 2: the cluster's membership: who runs (each holding a session advisory lock,
        // lock_key, while alive) and which instance owns each partition of the accessories.
        StoreSchema.Migration(
            version: 2,
            sql: """
                CREATE TABLE cluster_members (
                    instance TEXT PRIMARY KEY,
                    lock_key BIGINT NOT NULL,
                    started_at TIMESTAMPTZ NOT NULL,
                    heartbeat_at TIMESTAMPTZ NOT NULL
                );
                CREATE TABLE cluster_partitions (
                    partition INT PRIMARY KEY,
                    owner TEXT,
                    epoch BIGINT NOT NULL DEFAULT 0,
                    since TIMESTAMPTZ
                );
                """),
        // 3: SQLite's version 4: home sources, aliases, run-time source names.
        StoreSchema.Migration(
            version: 3,
            sql: """
                CREATE TABLE home_sources (
                    accessory_id BIGINT NOT NULL
                        REFERENCES accessories(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
                    position INTEGER NOT NULL,
                    source BIGINT NOT NULL,
                    PRIMARY KEY (accessory_id, position)
                );
                CREATE TABLE aliases (
                    accessory_id BIGINT PRIMARY KEY
                        REFERENCES accessories(id) ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED,
                    alias BIGINT NOT NULL UNIQUE
                );
                CREATE TABLE source_names (
                    source BIGINT PRIMARY KEY,
                    name TEXT NOT NULL,
                    updated_at BIGINT NOT NULL
                );
                """),
        // 4: SQLite's version 5: an IRK's byte order, what re-attaching an accessory needs.
        StoreSchema.Migration(
            version: 4,
            sql: """
                ALTER TABLE identities ADD COLUMN irk_order TEXT;
                ALTER TABLE identities ADD COLUMN profile_model INTEGER;
                ALTER TABLE identities ADD COLUMN profile_colour INTEGER;
                ALTER TABLE identities ADD COLUMN last_room TEXT;
                """),
    ]
}
