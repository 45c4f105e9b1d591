import AccessoryKit
import Configuration
import HomeAssistant
import JSON
import MQTT
import Testing

@testable import Bridge

/// The Ingest stage alone: no engine, no storage, no broker.
@Suite("Ingest: routes and outcomes")
struct IngestTests {
    static func configuration(homeAssistant: Bool = false) throws -> BridgeConfiguration {
        let yaml = BridgeHarness.yaml(server: "mqtt://127.0.0.1:1", database: "/nonexistent/db.sqlite3", homeAssistant: homeAssistant)
        return try ConfigurationLoader.load(yaml: yaml, environment: [:], hostname: "testhost").get()
    }

    /// Ingest reading `engine` (by default one that knows no accessory).
    static func ingest(homeAssistant: Bool = false, engine: EngineHolder? = nil) throws -> IngestFeed {
        let configuration = try Self.configuration(homeAssistant: homeAssistant)
        let holder = engine ?? EngineHolder(BridgeEngine(configuration: configuration.engine))
        return IngestFeed(configuration: configuration, engine: EngineView(holder))
    }

    static func message(_ topic: String, _ payload: String, retain: Bool = false) -> MQTTMessage {
        MQTTMessage(topic: topic, payload: Array(payload.utf8), qos: .atLeastOnce, retain: retain)
    }

    /// A route as the tests name it: the bridge's own API, or whose claim.
    enum Expected: Sendable, CustomTestStringConvertible {
        case request(String), set(Substring), homeAssistantStatus, gateway(index: Int, status: Bool = false), unrouted

        var testDescription: String { "\(self)" }

        func matches(_ route: IngestRoute, in feed: IngestFeed) -> Bool {
            switch self {
            case .request(let name): route == .request(name: name)
            case .set(let id): route == .set(accessory: id)
            case .homeAssistantStatus: feed.claimant(of: route) is HomeAssistantStatusComponent
            case .gateway(let index, let status): route == feed.gatewayRoute(index: index, status: status)
            case .unrouted: route == .unrouted
            }
        }
    }

    @Test(
        "each topic is classified once into its route",
        arguments: [
            ("aabridge/bridge/request/picker/show", Expected.request("picker/show")),
            ("aabridge/accessory/A1B2C3D4E5F6/set", .set("A1B2C3D4E5F6")),
            ("homeassistant/status", .homeAssistantStatus),
            ("home/kitchen/BTtoMQTT/A1B2C3D4E5F6", .gateway(index: 0)),
            ("home/kitchen/LWT", .gateway(index: 0, status: true)),
            ("aabridge/telemetry/livingroom/A1B2C3D4E5F6", .gateway(index: 1)),
            ("espresense/devices/abc/kitchen", .gateway(index: 2)),
            ("aabridge/bridge/state", .unrouted),
            ("aabridge/bridge/request/", .unrouted),
        ])
    func routes(topic: String, route: Expected) throws {
        let feed = try Self.ingest(homeAssistant: true)
        #expect(route.matches(feed.router.route(topic), in: feed))
    }

    @Test("one-off messages (requests, /set, statuses) are never shed; gateway telemetry is")
    func oneOffRoutes() throws {
        let router = try Self.ingest(homeAssistant: true).router
        let oneOff = ["aabridge/bridge/request/health", "aabridge/accessory/A1/set", "homeassistant/status", "home/kitchen/LWT"].map(
            router.route)
        #expect(oneOff.allSatisfy { $0.isOneOff && !$0.isSheddable })
        let telemetry = router.route("home/kitchen/BTtoMQTT/A1B2C3D4E5F6")
        #expect(telemetry.isSheddable && !telemetry.isOneOff)
        #expect(!IngestRoute.unrouted.isOneOff && !IngestRoute.unrouted.isSheddable)
    }

    @Test("under congestion a one-off message overtakes telemetry, but never one that arrived before it")
    func oneOffOrder() throws {
        let router = try Self.ingest().router
        let lane = RequestLane(limit: 10, congestion: 2)
        let backlog = Backlog(limit: 100)
        let (events, sink) = AsyncStream.makeStream(of: RuntimeEvent.self)
        let inbox = RuntimeInbox(router: router, requestLane: lane, backlog: backlog, sink: sink)
        func request(_ name: String) -> MQTTMessage { Self.message("aabridge/bridge/request/\(name)", "{}") }
        let telemetry = Self.message("home/kitchen/BTtoMQTT/A1B2C3D4E5F6", #"{"rssi":-60}"#)
        inbox.forward(request("picker/show")) // not congested: the backlog
        for _ in 0..<3 { inbox.forward(telemetry) } // now congested
        inbox.forward(request("picker/select")) // picker/show still waits: behind it, not past it
        #expect(lane.drain().isEmpty)
        // The loop takes picker/show (and the telemetry); now a one-off may overtake.
        backlog.taken()
        lane.backloggedTaken()
        inbox.forward(Self.message("home/kitchen/LWT", "offline"))
        #expect(lane.drain().isEmpty, "picker/select still waits in the backlog")
        // The loop takes the rest: three telemetry messages, picker/select, the status.
        for _ in 0..<5 { backlog.taken() }
        lane.backloggedTaken()
        lane.backloggedTaken()
        for _ in 0..<3 { inbox.forward(telemetry) }
        inbox.forward(Self.message("aabridge/accessory/A1B2C3D4E5F6/set", #"{"source_disconnected":"11:22:33:44:55:66"}"#))
        #expect(lane.drain().map(\.0.topic) == ["aabridge/accessory/A1B2C3D4E5F6/set"], "nothing one-off waits: it overtakes")
        sink.finish()
        _ = events
    }

    @Test("Home Assistant's status topic is not routed when discovery is off")
    func homeAssistantOff() throws {
        let feed = try Self.ingest(homeAssistant: false)
        #expect(!(feed.claimant(of: feed.router.route("homeassistant/status")) is HomeAssistantStatusComponent))
    }

    @Test("a retained request or /set is refused with a warning that says how to clear it")
    func retainedRefused() throws {
        var ingest = try Self.ingest()
        for topic in ["aabridge/bridge/request/health", "aabridge/accessory/A1B2C3D4E5F6/set"] {
            let outcome = ingest.ingest(
                Self.message(topic, "{}", retain: true), route: ingest.router.route(topic), at: Timestamp(milliseconds: 1))
            guard case .none = outcome.effect else {
                Issue.record("a retained \(topic) must not be carried out")
                continue
            }
            #expect(outcome.notice?.level == .warning)
            #expect(outcome.notice?.message.contains("mosquitto_pub -r -n -t '\(topic)'") == true)
        }
    }

    @Test("a request is parsed once: its transaction is kept, a payload that is not JSON is invalidRequest")
    func requests() throws {
        var ingest = try Self.ingest()
        let topic = "aabridge/bridge/request/health"
        guard
            case .request(let request) = ingest.ingest(
                Self.message(topic, #"{"transaction":7}"#), route: .request(name: "health"), at: Timestamp(milliseconds: 1)
            ).effect
        else {
            Issue.record("a request")
            return
        }
        #expect(request.transaction == 7)
        #expect(request.decoded == .success(.health))
        guard
            case .request(let bad) = ingest.ingest(
                Self.message(topic, "nope"), route: .request(name: "health"), at: Timestamp(milliseconds: 1)
            ).effect,
            case .failure(let error) = bad.decoded
        else {
            Issue.record("a refused request")
            return
        }
        #expect(error.code == "invalidRequest")
        #expect(bad.transaction == nil)
    }

    @Test("telemetry for an accessory the engine does not know is rejected, counted per gateway; once known it is engine input")
    func unknownAccessory() throws {
        let configuration = try Self.configuration()
        let engine = EngineHolder(BridgeEngine(configuration: configuration.engine))
        var ingest = try Self.ingest(engine: engine)
        let topic = "aabridge/telemetry/livingroom/A1B2C3D4E5F6"
        let outcome = ingest.ingest(
            Self.message(topic, #"{"rssi":-60}"#), route: try #require(ingest.gatewayRoute(index: 1)), at: Timestamp(milliseconds: 1))
        #expect(outcome.rejection?.reason == "telemetry for unknown accessory A1:B2:C3:D4:E5:F6")
        #expect(outcome.rejection?.gateway == "livingroom")
        #expect(outcome.gatewaysChanged, "a gateway heard for the first time changes bridge/gateways")
        let set = ingest.ingest(
            Self.message("aabridge/accessory/A1B2C3D4E5F6/set", #"{"rssi":-60}"#), route: .set(accessory: "A1B2C3D4E5F6"),
            at: Timestamp(milliseconds: 1))
        #expect(set.rejection?.gateway == "set")

        let id = try #require(BluetoothAddress("A1:B2:C3:D4:E5:F6"))
        let accessory = Accessory(
            id: id, displayName: "AirPods", product: "AirPods Pro", descriptor: DiscoveryDescriptor(), state: .authorized)
        engine.engine = BridgeEngine(configuration: configuration.engine, restored: RestoredState(accessories: [accessory]))
        let known = ingest.ingest(
            Self.message(topic, #"{"rssi":-60}"#), route: try #require(ingest.gatewayRoute(index: 1)), at: Timestamp(milliseconds: 2))
        guard case .telemetry(.report(let report), _, let refresh) = known.effect else {
            Issue.record("known accessory: engine input expected, got \(known.effect)")
            return
        }
        #expect(report.accessory == id)
        #expect(refresh == id)
        #expect(!known.gatewaysChanged, "livingroom was heard with the first message already")
        engine.engine = BridgeEngine(configuration: configuration.engine)
        ingest.applied([.accessoryRemoved(id)])
        #expect(
            ingest.ingest(
                Self.message(topic, #"{"rssi":-60}"#), route: try #require(ingest.gatewayRoute(index: 1)), at: Timestamp(milliseconds: 3)
            ).rejection != nil
        )
    }

    @Test("an advertisement of nobody reaches the engine only while the picker is presented; its gateway counts it either way")
    func nobodysAdvertisement() throws {
        let configuration = try Self.configuration()
        let engine = EngineHolder(BridgeEngine(configuration: configuration.engine))
        _ = engine.engine.handle(.activate, at: Timestamp(milliseconds: 0))
        var ingest = try Self.ingest(engine: engine)
        // An iPhone's nearby info (Theengs' documented payload) from a resolvable private address.
        let topic = "home/kitchen/BTtoMQTT/54945E9F64C4"
        let payload = #"{"id":"54:94:5E:9F:64:C4","mac_type":1,"manufacturerdata":"4c0010060319247bbc68","rssi":-74,"txpower":12}"#
        func heard(at milliseconds: Int64) -> FedOutcome {
            ingest.ingest(Self.message(topic, payload), route: ingest.router.route(topic), at: Timestamp(milliseconds: milliseconds))
        }
        func kitchen(at milliseconds: Int64) -> JSONValue? {
            ingest.gatewaysPayload(at: Timestamp(milliseconds: milliseconds)).arrayValue?.first?["heard"]?.arrayValue?.first
        }

        let closed = heard(at: 1_000)
        guard case .none = closed.effect else {
            Issue.record("with the picker closed the engine would drop it: no input expected, got \(closed.effect)")
            return
        }
        #expect(closed.gatewaysChanged, "the kitchen gateway was heard for the first time")
        #expect(kitchen(at: 1_000)?["advertisements_per_min"] == .int(1))
        #expect(kitchen(at: 1_000)?["attributed"] == .int(0))

        let shown = engine.engine.handle(
            .request(.showPicker(products: nil, timeout: .default), role: .container), at: Timestamp(milliseconds: 1_500))
        #expect(shown.result?.error == nil, "\(String(describing: shown.result))")
        let presented = heard(at: 2_000)
        guard case .telemetry(.sighting(let sighting), _, _) = presented.effect else {
            Issue.record("a presented picker takes every advertisement: a sighting expected, got \(presented.effect)")
            return
        }
        #expect(sighting.accessoryID == BluetoothAddress("54:94:5E:9F:64:C4"))
        #expect(kitchen(at: 2_000)?["advertisements_per_min"] == .int(2))
        #expect(kitchen(at: 2_000)?["attributed"] == .int(0))
    }

    @Test("the case's own frame without a key: counted on the gateway's figures, attributed to nobody, not rejected")
    func chargingCaseWithoutKey() throws {
        var ingest = try Self.ingest()
        let topic = "home/kitchen/BTtoMQTT/5B1C2D3E4F60"
        let payload = #"{"id":"5B:1C:2D:3E:4F:60","mac_type":1,"manufacturerdata":"\#(ChargingCaseFlowTests.caseFrame)","rssi":-52}"#
        let outcome = ingest.ingest(Self.message(topic, payload), route: ingest.router.route(topic), at: Timestamp(milliseconds: 1_000))
        #expect(outcome.rejection == nil)
        guard case .none = outcome.effect else {
            Issue.record("nobody's, with the picker closed: no input expected, got \(outcome.effect)")
            return
        }
        let kitchen = ingest.gatewaysPayload(at: Timestamp(milliseconds: 1_000)).arrayValue?.first?["heard"]?.arrayValue?.first
        #expect(kitchen?["advertisements_per_min"] == .int(1))
        #expect(kitchen?["attributed"] == .int(0))
    }
}
