import Testing

@testable import Configuration

/// `rooms:` (node names to room names) and `homeassistant.picker_timeout_s`: what loads, and
/// each bad value refused with its key path.
@Suite struct RoomsConfigurationTests {
    @Test("rooms: maps node names to trimmed room names; several nodes may share a room; none by default")
    func roomsLoad() throws {
        let configuration = try ConfigurationTestSupport.load(
            """
            rooms:
              esp32-3f2a: Kitchen
              livingroom: " Living room "
              esp32-77b1: Kitchen
            """)
        #expect(configuration.rooms == ["esp32-3f2a": "Kitchen", "livingroom": "Living room", "esp32-77b1": "Kitchen"])
        #expect(try ConfigurationTestSupport.load("").rooms.isEmpty)
        #expect(try ConfigurationTestSupport.load("rooms:\n").rooms.isEmpty)
        // The summary (bridge/info's config) says which names are given.
        #expect(configuration.summary["rooms"] == ["esp32-3f2a": "Kitchen", "esp32-77b1": "Kitchen", "livingroom": "Living room"])
    }

    @Test(
        "bad rooms: refused with the key path, nothing else loads",
        arguments: [
            ("rooms: [kitchen]\n", "rooms", "expected a mapping of node names to room names"),
            ("rooms:\n  kitchen: \"\"\n", "rooms.kitchen", "must not be empty"),
            ("rooms:\n  kitchen: \"  \"\n", "rooms.kitchen", "must not be empty"),
            ("rooms:\n  kitchen: null\n", "rooms.kitchen", "expected a room name, found null"),
            ("rooms:\n  kitchen: [a]\n", "rooms.kitchen", "expected a room name, found a list"),
            ("rooms:\n  kitchen: \(String(repeating: "k", count: 65))\n", "rooms.kitchen", "longer than 64 characters"),
            ("rooms:\n  kitchen: \"a\\tb\"\n", "rooms.kitchen", "control characters"),
            ("rooms:\n  home/kitchen: Kitchen\n", "rooms.home/kitchen", "one topic level"),
            ("rooms:\n  \"kitchen+\": Kitchen\n", "rooms.kitchen+", "no /, + or #"),
            ("rooms:\n  kitchen: Kitchen\n  kitchen: Den\n", "rooms.kitchen", "duplicate node"),
            ("rooms:\n  ? [a]\n  : Kitchen\n", "rooms", "a node name must be a non-empty plain name"),
        ])
    func roomsRefused(_ yaml: String, _ path: String, _ message: String) {
        let issues = ConfigurationTestSupport.issues(yaml)
        #expect(issues.count == 1, "\(issues)")
        #expect(issues.first?.path == path, "\(issues)")
        #expect(issues.first?.message.contains(message) == true, "\(issues)")
    }

    @Test("homeassistant.picker_timeout_s: default 120, 1-86400 like picker/show's seconds, also from the environment")
    func pickerTimeout() throws {
        #expect(try ConfigurationTestSupport.load("").homeAssistant.pickerTimeoutSeconds == 120)
        #expect(try ConfigurationTestSupport.load("homeassistant:\n  picker_timeout_s: 300\n").homeAssistant.pickerTimeoutSeconds == 300)
        #expect(
            try ConfigurationTestSupport.load("homeassistant:\n  picker_timeout_s: 86400\n").homeAssistant.pickerTimeoutSeconds == 86_400)
        let environment = try ConfigurationTestSupport.load("", environment: ["AABRIDGE_HOMEASSISTANT_PICKER_TIMEOUT_S": "90"])
        #expect(environment.homeAssistant.pickerTimeoutSeconds == 90)
        for (value, message) in [
            ("0", "must be between 1 and 86400"), ("86401", "must be between 1 and 86400"), ("-5", "must be between 1 and 86400"),
            ("long", "expected an integer"),
        ] {
            let issues = ConfigurationTestSupport.issues("homeassistant:\n  picker_timeout_s: \(value)\n")
            #expect(issues.map(\.path) == ["homeassistant.picker_timeout_s"], "\(value): \(issues)")
            #expect(issues.first?.message.contains(message) == true, "\(value): \(issues)")
        }
        #expect(try ConfigurationTestSupport.load("").summary["homeassistant"]?["picker_timeout_s"] == 120)
    }
}
