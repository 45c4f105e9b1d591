extension StringProtocol {
    /// The text without the white space (`Character.isWhitespace`: spaces, tabs, line breaks)
    /// at either end. The executable's modules import FoundationEssentials, which has no
    /// `trimmingCharacters(in:)`, instead of all of Foundation (docs/performance.md, Memory).
    public var trimmingWhitespace: SubSequence {
        guard let first = firstIndex(where: { !$0.isWhitespace }), let last = lastIndex(where: { !$0.isWhitespace }) else {
            return self[endIndex...]
        }
        return self[first...last]
    }
}
