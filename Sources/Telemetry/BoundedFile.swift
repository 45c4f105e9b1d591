#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The one way the bridge and its commands read a file a user names (a configuration, a
/// secret, a Keychain export, a BlueZ `info`, the add-on's options): bounded before reading.
///
/// Here because every reader's module depends on Telemetry, and none should read alone: a
/// read that checks the size after reading holds a 3 GiB file in memory first, `stat`'s size is
/// 0 for `/dev/zero` (which never ends), and opening a FIFO for reading blocks until a writer
/// comes. So the file is opened without blocking (`O_NONBLOCK`: a FIFO opens at once), its
/// type checked on the descriptor opened (`fstat`, no race with a rename), only a regular file
/// is read, its size refused before a byte is read, and at most `limit + 1` bytes are read in
/// any case (a file that grows while read is refused too).
public enum BoundedFile {
    /// Why a file was not read. The descriptions never hold the file's content.
    public enum Problem: Error, Equatable, Sendable, CustomStringConvertible {
        /// No such file (or a directory on the way is missing).
        case missing
        /// Not a regular file: `kind` says what it is (a directory, a character device, a FIFO...).
        case notRegular(kind: String)
        /// Larger than the limit; `size` is what `fstat` said, or what was read past the limit.
        case tooLarge(size: Int, limit: Int)
        /// `open` or `read` failed (permission denied, ...).
        case unreadable(reason: String, code: Int32)

        public var description: String {
            switch self {
            case .missing: "no such file"
            case .notRegular(let kind): "it is \(kind), not a regular file"
            case .tooLarge(let size, let limit): "it is larger than \(limit) bytes (\(size))"
            case .unreadable(let reason, _): reason
            }
        }

        /// Whether it failed for lack of permission.
        public var isPermissionDenied: Bool {
            if case .unreadable(_, let code) = self { return code == EACCES || code == EPERM }
            return false
        }
    }

    /// The file's bytes, at most `limit` of them.
    public static func read(_ path: String, limit: Int) -> Result<[UInt8], Problem> {
        // stat first only for the message: a socket cannot be opened at all (ENXIO).
        var named = stat()
        if stat(path, &named) == 0, let kind = kind(of: named.st_mode) { return .failure(.notRegular(kind: kind)) }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return .failure(.missing) }
            return .failure(.unreadable(reason: code == EACCES || code == EPERM ? "permission denied" : reason(code), code: code))
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            let code = errno
            return .failure(.unreadable(reason: reason(code), code: code))
        }
        if let kind = kind(of: status.st_mode) { return .failure(.notRegular(kind: kind)) }
        let size = Int(status.st_size)
        guard size <= limit else { return .failure(.tooLarge(size: size, limit: limit)) }
        var bytes = [UInt8](repeating: 0, count: limit + 1)
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { buffer in
                systemRead(descriptor, buffer.baseAddress! + filled, buffer.count - filled)
            }
            if count == 0 { break }
            guard count > 0 else {
                let code = errno
                if code == EINTR { continue }
                return .failure(.unreadable(reason: reason(code), code: code))
            }
            filled += count
        }
        guard filled <= limit else { return .failure(.tooLarge(size: filled, limit: limit)) }
        bytes.removeLast(bytes.count - filled)
        return .success(bytes)
    }

    /// What a file of this mode is, or nil for a regular file.
    static func kind(of mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: nil
        case S_IFDIR: "a directory"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFIFO: "a FIFO"
        case S_IFSOCK: "a socket"
        default: "a special file"
        }
    }

    static func reason(_ code: Int32) -> String { String(cString: strerror(code)) }
}

/// The C library's `read`, outside `BoundedFile`, whose `read(_:limit:)` would hide it.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
