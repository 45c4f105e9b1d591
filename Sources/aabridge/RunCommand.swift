import Bridge
import Configuration
import Foundation
import Storage

/// `aabridge run`: loads and validates the configuration (exit 2 with every error), opens
/// the database (exit 1 with a clear reason), then runs the bridge until SIGTERM/SIGINT.
enum RunCommand {
    static func run(options: [String]) async -> Int32 {
        guard let configuration = Command.loadConfiguration(options) else { return ConfigurationErrors.exitStatus }
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
        // Signals are caught before anything else starts, so an early SIGTERM is graceful too.
        let signals = ShutdownSignals.stream()
        let runtime: BridgeRuntime
        do {
            runtime = try BridgeRuntime(configuration: configuration, store: store)
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
    static func run(options: [String]) -> Int32 {
        let path = Command.configurationPath(options)
        let (status, report) = ConfigurationLoader.validate(path: path)
        if status == 0 { print(report) } else { printError(report) }
        return status
    }
}
