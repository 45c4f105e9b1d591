import AccessoryKit
import MQTT

/// A form behind Home Assistant's buttons (the pairing form, the re-attach form): it claims its
/// `bridge/<form>/set` topic as a one-off message, and a retained press is refused with the
/// line that says how to clear it, since it would be carried out again after every reconnect.
protocol FormComponent: RuntimeComponent {
    /// `bridge/<form>/set`.
    var formTopic: String { get }

    /// A press on the form's topic (never a retained one).
    func press(_ payload: [UInt8], _ context: ComponentContext) async
}

extension FormComponent {
    var claims: [TopicClaim] { [.oneOff(formTopic)] }

    func handle(_ message: MQTTMessage, tag: Int, at now: Timestamp, _ context: ComponentContext) async {
        if message.retain { return context.logger.warning(Ingest.retainedRefusal(message.topic)) }
        await press(message.payload, context)
    }
}
