import Foundation

/// What the kernel accounts to another process, read from /proc: the CPU time (user + system)
/// a consumer spends on a stream, and the bridge's resident memory. The same reading serves
/// the bridge (running) and mosquitto_sub (an unreaped zombie once it exits), so both
/// consumers are measured the same way.
enum ProcessClock {
    /// Clock ticks per second of the `utime`/`stime` fields (USER_HZ, 100 on Linux).
    static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    /// User and system CPU time in microseconds: the split shows how much of a consumer's
    /// cost is the kernel's (socket reads, wake-ups), which callgrind does not count.
    struct Time: Sendable {
        var user: Double
        var system: Double
        var total: Double { user + system }

        static func - (a: Time, b: Time) -> Time { Time(user: a.user - b.user, system: a.system - b.system) }
    }

    /// `utime` and `stime` of `pid` (all its threads, live or exited); nil when /proc has no
    /// such process.
    static func cpu(_ pid: pid_t) -> Time? {
        guard let fields = statFields(pid), fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
            return nil
        }
        return Time(user: user * 1e6 / ticksPerSecond, system: system * 1e6 / ticksPerSecond)
    }

    /// `utime + stime` of `pid` in microseconds.
    static func cpuMicroseconds(_ pid: pid_t) -> Double? { cpu(pid)?.total }

    /// The fields of /proc/<pid>/stat after the command name (which may hold spaces and
    /// parentheses, hence the split at the last ')'): index 0 is the state, 11 utime, 12 stime.
    static func statFields(_ pid: pid_t) -> [Substring]? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        return text[text.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
    }

    /// VmRSS and VmHWM of `pid` in KiB (-1 when absent).
    static func memory(_ pid: pid_t) -> (rss: Int, peak: Int) {
        IdentityBenchmark.memory(pid)
    }

    /// The 1, 5 and 15 minute load averages, as /proc/loadavg says them.
    static func loadAverage() -> String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }
}
