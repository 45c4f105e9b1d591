import Bridge
import Foundation
import MQTT

/// `aabridge run`: connects to the broker, announces the bridge and stays until SIGTERM/SIGINT.
enum RunCommand {
    static func run(options: [String]) async -> Int32 {
        let server = ProcessInfo.processInfo.environment["AABRIDGE_MQTT_SERVER"] ?? "mqtt://localhost:1883"
        let baseTopic = ProcessInfo.processInfo.environment["AABRIDGE_MQTT_BASE_TOPIC"] ?? "aabridge"
        let stateTopic = "\(baseTopic)/bridge/state"
        var configuration = MQTTConfiguration(clientID: "aabridge-\(ProcessInfo.processInfo.hostName)")
        do {
            try configuration.setServer(server)
        } catch {
            printError("aabridge: mqtt.server: \(error.message)")
            return 2
        }
        configuration.will = .init(topic: stateTopic, payload: Array(#"{"state":"offline"}"#.utf8))
        let signals = ShutdownSignals.stream()
        let client: MQTTClient
        do {
            client = try MQTTClient(configuration: configuration)
        } catch {
            printError("aabridge: \(error.message)")
            return 2
        }
        client.start()
        let announcer = Task {
            for await state in client.connectionStates {
                switch state {
                case .connected:
                    printError("aabridge: connected to \(configuration.host):\(configuration.port)")
                    try? await client.publish(topic: stateTopic, string: #"{"state":"online"}"#, qos: .atLeastOnce, retain: true)
                case .disconnected(let error):
                    printError("aabridge: not connected: \(error.message) (retrying)")
                }
            }
        }
        for await signal in signals {
            printError("aabridge: signal \(signal), shutting down")
            break
        }
        if client.isConnected {
            try? await client.publish(topic: stateTopic, string: #"{"state":"offline"}"#, qos: .atLeastOnce, retain: true)
        }
        await client.disconnect()
        announcer.cancel()
        return 0
    }
}
