import Dispatch
import Synchronization

/// The box's own adapter as a source of advertisements: BlueZ over D-Bus on the system bus,
/// through libsystemd's sd-bus, on a thread of its own (``BlueZSession``). It reports what it
/// hears and where it stands through `report`, and never blocks its caller; a fault (no bus,
/// no bluetoothd, no adapter, a refusal) is reported and retried by itself.
///
/// It coexists with BlueZ's other clients: it sets its own discovery filter (BlueZ merges
/// them) and starts its own discovery session, and never powers the adapter, removes a
/// device or pairs.
public final class BlueZClient: Sendable {
    public struct Settings: Sendable {
        /// The gateway's name: each advertisement's `gateway`.
        public var gateway: String
        /// `hci0`; nil for the first adapter BlueZ lists.
        public var adapter: String?
        /// Passive scanning where BlueZ offers an `or_patterns` monitor.
        public var passive: Bool
        /// The bus address (`unix:path=…`); nil for the system bus's own socket.
        public var busAddress: String?
        /// How long after a fault it tries again.
        public var retryMilliseconds: Int

        public init(
            gateway: String, adapter: String? = nil, passive: Bool = false, busAddress: String? = nil, retryMilliseconds: Int = 2_000
        ) {
            self.gateway = gateway
            self.adapter = adapter
            self.passive = passive
            self.busAddress = busAddress
            self.retryMilliseconds = retryMilliseconds
        }
    }

    private let settings: Settings
    private let report: @Sendable (BlueZEvent) -> Void
    private let queue = DispatchQueue(label: "aabridge.bluez")
    private let stopping = Atomic<Bool>(false)

    public init(settings: Settings, report: @escaping @Sendable (BlueZEvent) -> Void) {
        self.settings = settings
        self.report = report
    }

    /// Starts the thread.
    public func start() {
        let settings = self.settings
        let report = self.report
        queue.async { [self] in
            switch LibSystemd.shared() {
            case .success(let sd):
                BlueZSession(settings: settings, sd: sd, report: report, stopping: { self.stopping.load(ordering: .relaxed) }).run()
            case .failure(let error):
                // Nothing to retry: the library is not there. Said once, as any fault is.
                report(.state(BlueZState(adapter: settings.adapter, fault: .noSystemBus, detail: error.description)))
            }
        }
    }

    /// Asks the thread to stop and waits for it: within a fifth of a second unless a call to
    /// BlueZ is under way (each is bounded by ``BlueZSession/callTimeoutMicroseconds``).
    public func stop() async {
        stopping.store(true, ordering: .relaxed)
        let queue = self.queue
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            queue.async { continuation.resume() }
        }
    }
}
