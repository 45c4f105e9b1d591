import AccessoryKit
import Configuration
import JSON
import MQTT

#if canImport(Glibc)
    import Glibc
#endif

/// The running bridge as the `keys` commands reach it: its broker, its retained
/// `bridge/accessories` and `bridge/state`, and the `accessory/keys` request that sets an
/// accessory's keys, so that every command's keys are committed by the bridge as any key is.
/// Keys go in the request's payload only: nothing here prints or logs one.
struct KeysDelivery {
    let mqtt: MQTTClient
    let inbox: CommandInbox
    let reader: Task<Void, Never>
    let topics: Topics
    let accessories: [ListedAccessory]
    /// `bridge/state`'s state, when the bridge published one.
    let state: String?

    /// What the bridge answered.
    enum Answer {
        case stored(irk: Bool, encryptionKey: Bool)
        case refused(code: String, message: String)
        case silent
    }

    /// Connects, subscribes, and reads the accessories. With `requireOnline`, a bridge that is
    /// not online is refused (a dry run only needs the accessories).
    static func open(_ configuration: BridgeConfiguration, requireOnline: Bool) async throws(KeysCommand.Failure) -> KeysDelivery {
        let topics = Topics(base: configuration.mqtt.baseTopic)
        let mqtt: MQTTClient
        switch await CommandClient.connect(configuration, topics: topics, role: "keys") {
        case .success(let client): mqtt = client
        case .failure(let failure): throw KeysCommand.Failure(status: 1, message: failure.message)
        }
        let inbox = CommandInbox()
        let reader = inbox.collect(mqtt.messages)
        do {
            let delivery = try await open(mqtt: mqtt, inbox: inbox, reader: reader, topics: topics, requireOnline: requireOnline)
            return delivery
        } catch {
            reader.cancel()
            await mqtt.disconnect()
            throw error
        }
    }

    private static func open(
        mqtt: MQTTClient, inbox: CommandInbox, reader: Task<Void, Never>, topics: Topics, requireOnline: Bool
    ) async throws(KeysCommand.Failure) -> KeysDelivery {
        do {
            try await mqtt.subscribe(topics.response(.keys))
            try await mqtt.subscribe(topics.bridgeState)
            try await mqtt.subscribe(topics.bridgeAccessories)
        } catch {
            throw KeysCommand.Failure(status: 1, message: "cannot subscribe: \(error.message)")
        }
        await inbox.wait(timeout: KeysCommand.retainedTimeout, forAll: [topics.bridgeState, topics.bridgeAccessories])
        guard let published = inbox.latest(on: topics.bridgeAccessories)?.message else {
            throw KeysCommand.Failure(
                status: 1,
                message:
                    "no retained \(topics.bridgeAccessories): the bridge never ran against this broker (is --config the bridge's configuration?)"
            )
        }
        let accessories = try KeysCommand.parseAccessories(published, topic: topics.bridgeAccessories)
        let state = inbox.latest(on: topics.bridgeState).flatMap { try? JSONParser.parse($0.message.payload) }?["state"]?.stringValue
        if requireOnline, state != "online" {
            throw KeysCommand.Failure(
                status: 1, message: "the bridge is \(state ?? "not running") (\(topics.bridgeState)): start it, then run this again")
        }
        return KeysDelivery(mqtt: mqtt, inbox: inbox, reader: reader, topics: topics, accessories: accessories, state: state)
    }

    func close() async {
        reader.cancel()
        await mqtt.disconnect()
    }

    /// Sends one `accessory/keys` request and waits for its answer.
    func send(
        irk: AccessoryKey, encryptionKey: AccessoryKey?, to accessory: ListedAccessory
    ) async throws(KeysCommand.Failure)
        -> Answer
    {
        let response = topics.response(.keys)
        let transaction = "aabridge-keys-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        var fields: [(String, JSONValue)] = [("id", .string(accessory.id.description)), ("irk", .string(irk.hexDigits))]
        if let encryptionKey { fields.append(("encryption_key", .string(encryptionKey.hexDigits))) }
        fields.append(("transaction", .string(transaction)))
        do {
            try await mqtt.publishAcknowledged(
                topic: topics.request(.keys), payload: JSONValue.object(fields).bytes, qos: .atLeastOnce)
        } catch {
            throw KeysCommand.Failure(status: 1, message: "cannot publish the request: \(error.message)")
        }
        let answer = await inbox.first(on: response, timeout: KeysCommand.responseTimeout) { message in
            (try? JSONParser.parse(message.payload))?["transaction"]?.stringValue == transaction
        }
        guard let answer, let body = try? JSONParser.parse(answer.payload) else { return .silent }
        if body["status"]?.stringValue == "ok" {
            let keys = body["data"]?["keys"]
            return .stored(irk: keys?["irk"]?.boolValue == true, encryptionKey: keys?["encryption_key"]?.boolValue == true)
        }
        return .refused(
            code: body["error"]?["code"]?.stringValue ?? "unknown", message: body["error"]?["message"]?.stringValue ?? "no message")
    }

    var silentMessage: String {
        "no answer from the bridge within \(KeysCommand.responseTimeout.components.seconds) s on \(topics.response(.keys)) (is it a version with \(RequestName.keys.name)?)"
    }
}
