/// The `homeassistant:` section: MQTT discovery.
public struct HomeAssistantConfiguration: Hashable, Sendable {
    public var enabled: Bool
    public var discoveryPrefix: String
    /// Home Assistant's birth/last-will topic; discovery is republished when it says `online`.
    public var statusTopic: String

    /// Creates the section; the defaults are the documented ones.
    public init(enabled: Bool = true, discoveryPrefix: String = "homeassistant", statusTopic: String = "homeassistant/status") {
        self.enabled = enabled
        self.discoveryPrefix = discoveryPrefix
        self.statusTopic = statusTopic
    }
}
