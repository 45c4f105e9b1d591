import Bridge
import Configuration
import MQTT
import Storage

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `aabridge run`: loads and validates the configuration (exit 2 with every error), takes
/// the database's lock (SQLite's lock file, PostgreSQL's advisory lock; exit 3 when another aabridge holds it), opens the database
/// (SQLite's file or PostgreSQL's `storage.url`; exit 1 with a clear reason), then runs the bridge until SIGTERM/SIGINT; the runtime returns the
/// status from there on (4 when the session's first commit cannot be stored,
/// `BridgeRuntime.activationNotStoredExitStatus`).
enum RunCommand {
    /// Another aabridge already runs on `storage.path` (or `storage.url`): a restart will not help until it stops.
    static let alreadyRunningExitStatus: Int32 = 3

    static func run(options: CommandArguments) async -> Int32 {
        guard let configuration = Command.loadConfiguration(options) else { return ConfigurationErrors.exitStatus }
        switch configuration.storage.backend {
        case .sqlite: return await runOnSQLite(configuration)
        case .postgresql: return await runOnPostgres(configuration)
        }
    }

    private static func runOnSQLite(_ configuration: BridgeConfiguration) async -> Int32 {
        // One bridge per database, held until the process exits (the kernel releases it).
        let lock: DatabaseLock
        do {
            lock = try DatabaseLock(database: configuration.storage.path)
        } catch {
            printError("aabridge: storage.path: \(error.message)")
            return alreadyRunningExitStatus
        }
        defer { lock.release() }
        if let warning = lock.warning { printError("aabridge: storage.path: \(warning)") }
        ResidentMemory.fixHeapThresholds()
        let store: AccessoryStore
        do {
            store = try AccessoryStore(path: configuration.storage.path)
        } catch  where error.code == .readOnly {
            // Read-only storage: keep serving what is stored; every change is refused with
            // `unknown` instead of being acknowledged and lost.
            do {
                store = try AccessoryStore(path: configuration.storage.path, mode: .readOnly)
                printError("aabridge: storage.path: \(error.message); running read-only, changes will be refused")
            } catch {
                printError("aabridge: storage.path: \(error.message)")
                return 1
            }
        } catch {
            printError("aabridge: storage.path: \(error.message)")
            return 1
        }
        return await run(configuration, store: store)
    }

    /// PostgreSQL: no `DatabaseLock` (the database is on another machine); the store's
    /// instance lock (an advisory lock) refuses a second solo bridge, or a solo bridge beside
    /// a cluster, with exit 3, as SQLite's lock does. A server that cannot be reached at
    /// start is the same failure as a database that cannot be opened: exit 1, and the service
    /// manager's restart tries again.
    private static func runOnPostgres(_ configuration: BridgeConfiguration) async -> Int32 {
        ResidentMemory.fixHeapThresholds()
        let store: PostgresStore
        do {
            // In a cluster, each commit's notification names this instance, so that the others
            // reload what it changed and it skips its own (docs/scaling.md).
            let origin = configuration.cluster.enabled ? configuration.cluster.instance : ""
            // One solo bridge per database, or cluster members only (PostgresInstanceLock).
            store = try PostgresStore(
                url: configuration.storage.url ?? "", password: configuration.storage.password?.revealed, origin: origin,
                instanceLock: configuration.cluster.enabled ? .clusterMember : .solo,
                onLockLost: { error in
                    // Another bridge owns the database now; answering beside it would answer twice.
                    printError("aabridge: storage.url: \(error.message)")
                    exit(alreadyRunningExitStatus)
                })
        } catch  where error.code == .alreadyInUse {
            printError("aabridge: storage.url: \(error.message)")
            return alreadyRunningExitStatus
        } catch {
            printError("aabridge: storage.url: \(error.message)")
            return 1
        }
        // A standby or a read-only database: serve what is stored, refuse every change.
        if store.isReadOnly {
            printError("aabridge: storage.url: \(store.location) is read-only; running read-only, changes will be refused")
        }
        return await run(configuration, store: store)
    }

    private static func run(_ configuration: BridgeConfiguration, store: any AccessoryStorage) async -> Int32 {
        // Signals are caught before anything else starts, so an early SIGTERM is graceful too.
        let signals = ShutdownSignals.stream()
        let runtime: BridgeRuntime
        do {
            runtime = try BridgeRuntime(configuration: configuration, store: store)
        } catch let error as MQTTError where error.code == .invalidConfiguration {
            // `validate` checks the same files; one that changed since is still a configuration error.
            printError("aabridge: mqtt: \(error.message)")
            store.close()
            return ConfigurationErrors.exitStatus
        } catch {
            printError("aabridge: \(error)")
            store.close()
            return 1
        }
        return await runtime.run(signals: signals)
    }
}

/// `aabridge validate`: the same checks as `run`, without connecting.
enum ValidateCommand {
    static func run(options: CommandArguments) -> Int32 {
        let path = options.configurationPath
        let (status, report) = ConfigurationLoader.validate(path: path)
        if status == 0 { print(report) } else { printError(report) }
        return status
    }
}
