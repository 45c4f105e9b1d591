import AccessoryKit

/// Forwards head-tracking sensor frames to the spatial audio renderer: the engine decides
/// which frames go (the session is active, the frame is 1-70 bytes) and which are refused; this
/// component carries them out within each accessory's ``SensorFrameBudget``, on
/// `accessory/<ID>/imu` (QoS 0) and `accessory/<ID>/error`. The caps live here, not in the
/// engine: they protect the broker, an I/O concern, and keeping the per-second counts out of
/// the engine keeps its state (and every copy a request makes of it) what the domain says.
///
/// It claims nothing and stores nothing; it reacts to engine outputs. Its budgets are per
/// accessory the engine knows (a removed accessory's goes with it), so they stay bounded.
final class HeadTrackingComponent: RuntimeComponent {
    private var budgets: [BluetoothAddress: SensorFrameBudget] = [:]
    private let payloads = Payloads()
    /// Frames forwarded, frames dropped over the cap, refusals published, refusals dropped.
    private(set) var forwarded = 0
    private(set) var framesDropped = 0
    private(set) var refusals: [AudioAccessoryError.Code: Int] = [:]
    private(set) var refusalsDropped = 0

    func applied(_ outputs: [EngineOutput], at now: Timestamp, _ context: ComponentContext) {
        for output in outputs {
            switch output {
            case .sensorFrame(let id, let frame):
                guard context.owns(id) else { continue }
                guard budgets[id, default: SensorFrameBudget()].admitFrame(at: now) else {
                    framesDropped += 1
                    continue
                }
                forwarded += 1
                context.publishTransient(context.topics.imu(id), payloads.sensorFrame(frame).bytes)
            case .sensorFrameRefused(let id, let error):
                guard context.owns(id) else { continue }
                guard budgets[id, default: SensorFrameBudget()].admitError(at: now) else {
                    refusalsDropped += 1
                    continue
                }
                refusals[error.code, default: 0] += 1
                context.publish(context.topics.error(id), payloads.sensorFrameError(error, at: now).bytes, retain: false)
            case .accessoryRemoved(let id):
                budgets[id] = nil
            default:
                break
            }
        }
    }

    func metrics(_ text: inout MetricsText, _ context: ComponentContext) {
        text.counter("aabridge_head_tracking_frames_total", "Head-tracking sensor frames forwarded on accessory/<ID>/imu.", forwarded)
        text.counter(
            "aabridge_head_tracking_frames_dropped_total",
            "Head-tracking sensor frames dropped over the cap of \(SensorFrameBudget.framesPerSecond) a second per accessory.",
            framesDropped)
        text.counter(
            "aabridge_head_tracking_refusals_total", "Sensor frames refused and published on accessory/<ID>/error, by code.",
            label: "code", Dictionary(uniqueKeysWithValues: AudioAccessoryError.Code.allCases.map { ($0.rawValue, refusals[$0] ?? 0) }))
        text.counter(
            "aabridge_head_tracking_refusals_dropped_total",
            "Sensor frame refusals not published over the cap of one a second per accessory.", refusalsDropped)
    }
}
