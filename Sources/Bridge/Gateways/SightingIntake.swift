import AccessoryKit
import Telemetry

/// Where a source hands what it heard: ``Ingest`` itself (in a test), or a component's
/// ``ComponentContext``, which passes it to the runtime's Ingest.
protocol SightingIntake {
    /// An advertisement: whose it is, and the sighting for the engine.
    mutating func advertisement(_ advertisement: Advertisement, at now: Timestamp) -> IngestOutcome
    /// A report (a firmware relay's), named by the accessory's id or alias.
    mutating func report(_ report: AccessoryReport, from source: String) -> IngestOutcome
    /// What the source's parser refused.
    mutating func refused(_ rejection: TelemetryRejection, from source: String) -> IngestOutcome
}

extension Ingest: SightingIntake {}
