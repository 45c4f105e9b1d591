#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Standard output or standard error, written a whole line at a time with `write(2)`,
/// unbuffered, as Foundation's `FileHandle` wrote them: the executable's modules import only
/// FoundationEssentials, which has no `FileHandle` (docs/performance.md, Memory).
public enum StandardStream: Int32, Sendable {
    case output = 1
    case error = 2

    /// Writes `line` and a newline; a short write is continued, an interrupted one retried.
    public func writeLine(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(rawValue, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}
