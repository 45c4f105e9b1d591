import Bridge
import Configuration
import Glibc
import MQTT

/// The MQTT client of a command that talks to a running bridge (`healthcheck`, `keys
/// import-bluez`, `report-sources`): the bridge's broker settings and credentials, a client id
/// of its own (`aabridge-<role>-<pid>`, so it never takes over the bridge's session), no will
/// (its disconnect must not announce the bridge offline), and a clean session that expires when
/// it disconnects. The bridge's persistent session is for the bridge alone: with it, every
/// healthcheck (the image's runs one every 30 s) left a session with QoS 1 subscriptions at the
/// broker, queueing for `persistent_client_expiration`.
enum CommandClient {
    /// Connects, or says why not in one line ("broker not reachable: ...").
    static func connect(_ configuration: BridgeConfiguration, topics: Topics, role: String) async -> Result<MQTTClient, CommandFailure> {
        do {
            var client = try BridgeRuntime.clientConfiguration(configuration, topics: topics)
            client.clientID = "aabridge-\(role)-\(getpid())"
            client.will = nil
            client.cleanSession = true
            client.sessionExpiryInterval = 0
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
