import AccessoryKit
import HomeAssistant
import MQTT

/// Home Assistant's status topic (`homeassistant.status_topic`): when Home Assistant announces
/// itself (its birth message, after a restart), every retained topic and the discovery go out
/// again after a short random delay, once for a burst of birth messages, since every
/// republish is about four messages per accessory.
final class HomeAssistantStatusComponent: RuntimeComponent {
    private let discovery: HomeAssistantDiscovery
    private let statusTopic: String
    /// A republish is pending.
    private var republishScheduled = false

    /// The delayed republish, posted to this component's mailbox.
    private struct Republish: Sendable {}

    init(discovery: HomeAssistantDiscovery, statusTopic: String) {
        self.discovery = discovery
        self.statusTopic = statusTopic
    }

    var claims: [TopicClaim] { [.oneOff(statusTopic)] }

    func handle(_ message: MQTTMessage, tag: Int, at now: Timestamp, _ context: ComponentContext) async {
        guard discovery.isBirthMessage(message.payload), !republishScheduled else { return }
        republishScheduled = true
        // A random delay, so a house full of bridges does not answer at once.
        var generator = SystemRandomNumberGenerator()
        context.mailbox.post(Republish(), after: discovery.republishDelay(using: &generator))
    }

    func handle(event: any Sendable, _ context: ComponentContext) async {
        guard event is Republish else { return }
        republishScheduled = false
        context.republishEverything()
    }
}
