import Testing
@testable import MQTT

@Test func moduleLinks() {
    #expect(String(describing: MQTTModule.self) == "MQTTModule")
}
