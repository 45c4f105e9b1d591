/// The engine's answer to one input.
public struct EngineStep: Hashable, Sendable {
    /// The response for requests and lifecycle inputs; nil for telemetry and ticks.
    public var result: RequestResult?
    /// Everything to publish and store, in order.
    public var outputs: [EngineOutput]

    /// Creates a step.
    public init(result: RequestResult?, outputs: [EngineOutput]) {
        self.result = result
        self.outputs = outputs
    }
}
