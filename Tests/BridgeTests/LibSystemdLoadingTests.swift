import CSystemd
import Foundation
import TestSupport
import Testing

@testable import BlueZ

/// libsystemd's sd-bus is opened with `dlopen` when a `bluez` gateway starts, never linked: a
/// bridge without one does not map it (nor libgcrypt, liblzma, libzstd, liblz4, libcap), and a
/// missing libsystemd is the gateway's `noSystemBus` fault with a message naming the package.
@Suite("LibSystemd: sd-bus loaded only for the bluez gateway, a clear error when it is missing")
struct LibSystemdLoadingTests {
    @Test("a libsystemd that cannot be opened is refused, naming the library and Debian's package")
    func missingLibrary() {
        #expect {
            _ = try LibSystemd("libsystemd-aabridge-absent.so.0")
        } throws: { error in
            let text = (error as? LibSystemdError)?.description ?? ""
            let named = "the bluez gateway needs libsystemd's sd-bus (libsystemd-aabridge-absent.so.0, Debian's package libsystemd0)"
            return text.contains(named) && text.hasSuffix("; install libsystemd0")
        }
    }

    @Test("a library that is not libsystemd (no sd_bus_process) is refused, naming the function")
    func notLibSystemd() {
        #expect {
            _ = try LibSystemd("libsqlite3.so.0")
        } throws: { error in
            (error as? LibSystemdError)?.description.contains("it has no sd_bus_process") ?? false
        }
    }

    @Test("the installed libsystemd loads, and the monitor's vtable points at its format reference")
    func installedLibrary() throws {
        let library = try LibSystemd(LibSystemd.libraryName)
        let format = try #require(dlsym(dlopen(LibSystemd.libraryName, RTLD_NOW | RTLD_LOCAL), "sd_bus_object_vtable_format"))
        #expect(UnsafeRawPointer(library.monitorVtable[0].x.start.vtable_format_reference) == UnsafeRawPointer(format))
        #expect(library.monitorVtable[0].x.start.element_size == MemoryLayout<sd_bus_vtable>.size)
    }

    @Test("nothing in the build links libsystemd: the test executable (every module) does not depend on it")
    func notLinked() throws {
        let text = try LinkedLibraries.ofTestExecutable()
        #expect(text.contains("libsqlite3"))
        #expect(!text.contains("libsystemd"))
        #expect(!text.contains("libgcrypt"))
    }
}
