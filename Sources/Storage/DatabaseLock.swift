import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One bridge per database: an exclusive `flock` on `<storage.path>.lock`, beside the
/// database, held until ``release()`` or the process ends (the kernel drops it on exit, also
/// after `kill -9`, so a stale lock file never blocks a restart).
///
/// `flock` belongs to the open file description: a second lock on the same path fails in
/// another process and in this one alike. The lock file holds the owner's pid (for the
/// message a second instance prints) and is left in place when released; removing it would
/// let two processes lock two different files of the same name.
///
/// Where the file cannot be created (a read-only file system or directory) an existing lock
/// file is still locked through a read-only descriptor; when there is none, nothing can be
/// locked, and ``isHeld`` is false with ``warning`` saying why. Such a store cannot be
/// written by any instance, so a read-only start goes on.
public final class DatabaseLock: Sendable {
    /// The lock file, `<database>.lock`.
    public let path: String
    /// Why no lock is held although the database is a file (nil when it is held or not needed).
    public let warning: String?
    private let descriptor: Atomic<Int32>

    /// Whether the lock is held.
    public var isHeld: Bool { descriptor.load(ordering: .relaxed) >= 0 }

    /// Takes the lock for the database at `database`.
    ///
    /// - Throws: `.alreadyInUse` when another process (or another lock in this one) holds it.
    public init(database: String) throws(StorageError) {
        path = database + ".lock"
        let (fd, warning) = try Self.lock(path, database: database)
        descriptor = Atomic(fd)
        self.warning = warning
    }

    /// The locked descriptor (-1 when none), or why there is none.
    private static func lock(_ path: String, database: String) throws(StorageError) -> (Int32, String?) {
        guard database != ":memory:", !database.hasPrefix("file:") else { return (-1, nil) }
        try? AccessoryStore.createDirectory(containing: database)
        var writable = true
        var fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        if fd < 0 {
            let reason = String(cString: strerror(errno))
            writable = false
            fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return (-1, "cannot create the lock file \(path) (\(reason)); not protected against a second instance") }
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let failure = errno
            let owner = owner(fd)
            close(fd)
            guard failure == EWOULDBLOCK || failure == EAGAIN else {
                return (-1, "cannot lock \(path) (\(String(cString: strerror(failure)))); not protected against a second instance")
            }
            let holder = owner.map { "aabridge (pid \($0))" } ?? "aabridge"
            throw StorageError(
                .alreadyInUse,
                message:
                    "another \(holder) is already running on \(database) (it holds \(path)); run one bridge per database, or give this one a storage.path of its own"
            )
        }
        if writable {
            let pid = Array("\(getpid())\n".utf8)
            if ftruncate(fd, 0) == 0 { _ = pwrite(fd, pid, pid.count, 0) }
        }
        return (fd, nil)
    }

    /// Releases the lock (closing the descriptor). Idempotent.
    public func release() {
        let fd = descriptor.exchange(-1, ordering: .relaxed)
        if fd >= 0 { close(fd) }
    }

    deinit { release() }

    /// The pid written in the lock file by its holder, when readable.
    private static func owner(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = pread(fd, &buffer, buffer.count, 0)
        guard count > 0 else { return nil }
        return Int32(String(String(decoding: buffer[0..<count], as: UTF8.self).trimmingWhitespace))
    }
}
