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

/// The `posix_spawn` attributes every child this project starts needs: an empty signal mask
/// and default dispositions for the signals a parent may block or ignore. Test runners block
/// signals on their threads, and the bridge's commands ignore SIGTERM/SIGINT to shut down
/// gracefully; a child inheriting either would ignore SIGTERM (mosquitto) or outlive a kill.
public enum SpawnAttributes {
    /// Calls `body` with initialized attributes, destroyed afterwards.
    /// - Parameter newProcessGroup: put the child in a process group of its own, so a
    ///   terminal's Ctrl-C (sent to the foreground group) does not reach it.
    public static func with<Result>(
        newProcessGroup: Bool = false, _ body: (inout posix_spawnattr_t) throws -> Result
    ) rethrows -> Result {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var emptyMask = sigset_t()
        sigemptyset(&emptyMask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGCHLD] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigmask(&attributes, &emptyMask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
        if newProcessGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        return try body(&attributes)
    }
}
