/// The `homeassistant:` section: MQTT discovery.
public struct HomeAssistantConfiguration: Hashable, Sendable {
    public var enabled: Bool
    public var discoveryPrefix: String
    /// Home Assistant's birth/last-will topic; discovery is republished when it says `online`.
    public var statusTopic: String
    /// How long the Show picker button presents the picker, in seconds: the request's default
    /// (30 s) is too short to choose a candidate and type a name on a phone.
    public var pickerTimeoutSeconds: Int

    /// The Show picker button's default timeout.
    public static let defaultPickerTimeoutSeconds = 120
    /// What `picker/show` accepts as a number of seconds (mqtt-api.md, "Requests").
    public static let pickerTimeoutRange = 1...86_400

    /// Creates the section; the defaults are the documented ones.
    public init(
        enabled: Bool = true, discoveryPrefix: String = "homeassistant", statusTopic: String = "homeassistant/status",
        pickerTimeoutSeconds: Int = Self.defaultPickerTimeoutSeconds
    ) {
        self.enabled = enabled
        self.discoveryPrefix = discoveryPrefix
        self.statusTopic = statusTopic
        self.pickerTimeoutSeconds = pickerTimeoutSeconds
    }
}
