import AccessoryKit
import JSON

/// `bridge/health` (retained): published every `health.interval_s` and with every retained
/// topic; the `health` request answers the same object.
final class HealthComponent: RuntimeComponent {
    private let intervalMilliseconds: Int64
    /// When it last went out on its interval (nil until the loop starts).
    private var publishedAt: Timestamp?

    init(intervalSeconds: Int) { intervalMilliseconds = Int64(intervalSeconds) * 1000 }

    func start(_ context: ComponentContext) async { publishedAt = context.now() }

    func nextDue(at now: Timestamp) -> Timestamp? {
        publishedAt.map { Timestamp(milliseconds: $0.milliseconds + intervalMilliseconds) }
    }

    func wake(at now: Timestamp, _ context: ComponentContext) {
        guard let publishedAt, now.milliseconds(since: publishedAt) >= intervalMilliseconds else { return }
        self.publishedAt = now
        context.publishBridge(context.topics.bridgeHealth, context.observation.health(at: now))
    }

    func republish(at now: Timestamp, _ context: ComponentContext) {
        context.publishBridge(context.topics.bridgeHealth, context.observation.health(at: now))
    }

    func snapshot(at now: Timestamp, _ context: ComponentContext) -> [(topic: String, payload: [UInt8])] {
        [("bridge/health", context.observation.health(at: now).bytes)]
    }
}
