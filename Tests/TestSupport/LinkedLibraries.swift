import Foundation

/// The shared libraries the running test executable depends on, as `ldd` lists them: every
/// module is linked into it, so a library the bridge opens with `dlopen` (libpq, libmicrohttpd,
/// libsystemd) must never appear here.
public enum LinkedLibraries {
    /// `ldd`'s output for `/proc/self/exe`.
    /// - Throws: ``BrokerError`` when `ldd` cannot run or fails.
    public static func ofTestExecutable() throws -> String {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let ldd = Process()
        ldd.executableURL = URL(fileURLWithPath: "/usr/bin/ldd")
        ldd.arguments = [executable]
        let output = Pipe()
        ldd.standardOutput = output
        try ldd.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        ldd.waitUntilExit()
        guard ldd.terminationStatus == 0 else { throw BrokerError("ldd \(executable) exited \(ldd.terminationStatus)") }
        return text
    }
}
