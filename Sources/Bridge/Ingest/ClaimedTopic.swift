/// The route of a message on a claimed topic: which component claimed it, and its claim's tag.
struct ClaimedTopic: Sendable, Hashable {
    /// The claiming component's place in the runtime's list.
    let component: Int
    let tag: Int
    let oneOff: Bool
    let sheddable: Bool
}
