import Foundation
import LocalProcess

/// What lets the bridge run under valgrind 3.19 at all: a preloaded `sigsuspend` that hands
/// the kernel a copy of the signal mask.
///
/// Every Swift program with an async main parks its main thread in libdispatch's
/// `_dispatch_sig_thread`, which calls `sigsuspend` with a mask in libdispatch's read-only
/// data. Valgrind's `rt_sigsuspend` wrapper writes to the mask (it removes the signals it
/// reserves for itself) and dies with SIGSEGV in its own code ("the 'impossible' happened",
/// shown next to the thread that libdispatch was starting, hence the look of a crash in
/// clone). The copy is on the stack, writable; the thread sleeps in the same system call
/// with the same mask, so the measured program does exactly what it did. Built here with the
/// system's C compiler, preloaded for both consumers alike (mosquitto_sub never calls it).
enum SigsuspendShim {
    static let source = """
        #define _GNU_SOURCE
        #include <signal.h>
        #include <sys/syscall.h>
        #include <unistd.h>
        int sigsuspend(const sigset_t *mask) {
            sigset_t copy = *mask;
            return (int)syscall(SYS_rt_sigsuspend, &copy, 8);
        }

        """

    /// Builds the shim in `directory` and returns the path of the shared object.
    static func build(in directory: String) throws -> String {
        let source = directory + "/sigsuspend.c"
        let library = directory + "/sigsuspend.so"
        try Self.source.write(toFile: source, atomically: true, encoding: .utf8)
        let compiler = try ChildProcess(
            path: "/usr/bin/cc", arguments: ["-O2", "-shared", "-fPIC", "-o", library, source], output: directory + "/cc.log")
        guard compiler.wait(timeout: 60) == 0 else {
            let log = (try? String(contentsOfFile: directory + "/cc.log", encoding: .utf8)) ?? ""
            throw E2E.Failure("cc could not build the sigsuspend shim: \(log)")
        }
        return library
    }
}
