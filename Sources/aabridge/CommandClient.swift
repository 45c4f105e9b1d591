import Bridge
import Configuration
import Glibc
import MQTT

/// The short-lived MQTT client of a command that talks to a running bridge (`healthcheck`,
/// `keys import-bluez`): the bridge's broker settings and credentials, a client id of its own
/// (`aabridge-<role>-<pid>`, so it never takes over the bridge's session), and no will (its
/// disconnect must not announce the bridge offline).
enum CommandClient {
    /// Connects, or says why not in one line ("broker not reachable: ...").
    static func connect(_ configuration: BridgeConfiguration, topics: Topics, role: String) async -> Result<MQTTClient, CommandFailure> {
        do {
            var client = try BridgeRuntime.clientConfiguration(configuration, topics: topics)
            client.clientID = "aabridge-\(role)-\(getpid())"
            client.will = nil
            let mqtt = try MQTTClient(configuration: client)
            try await mqtt.connect()
            return .success(mqtt)
        } catch let error as MQTTError {
            return .failure(CommandFailure(message: "broker not reachable: \(error.message)"))
        } catch {
            return .failure(CommandFailure(message: "broker not reachable: \(error)"))
        }
    }
}

/// Why a command's client could not do its job, in one line for stderr.
struct CommandFailure: Error {
    let message: String
}
