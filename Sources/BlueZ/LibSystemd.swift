import CSystemd

#if canImport(Glibc)
    import Glibc
#endif

/// libsystemd's sd-bus, opened with `dlopen` when a `bluez` gateway starts.
///
/// The bridge is not linked against libsystemd: a bridge without a `bluez` gateway never maps
/// it, nor libgcrypt, libgpg-error, liblzma, libzstd, liblz4 and libcap, which it brings
/// (docs/performance.md, "Libraries opened when configured"). ``BlueZSession`` and
/// ``DBusReader`` reach every sd-bus function through it; when the library cannot be opened,
/// the gateway reports `noSystemBus` with ``missingMessage(_:reason:)``.
final class LibSystemd: @unchecked Sendable {
    let process: aabridge_sd_bus_process
    let wait: aabridge_sd_bus_wait
    let new: aabridge_sd_bus_new
    let setAddress: aabridge_sd_bus_set_address
    let setBusClient: aabridge_sd_bus_set_bus_client
    let start: aabridge_sd_bus_start
    let openSystem: aabridge_sd_bus_open_system
    let unref: aabridge_sd_bus_unref
    let matchSignal: aabridge_sd_bus_match_signal
    let slotUnref: aabridge_sd_bus_slot_unref
    let flushCloseUnref: aabridge_sd_bus_flush_close_unref
    let messageOpenContainer: aabridge_sd_bus_message_open_container
    let messageAppendBasic: aabridge_sd_bus_message_append_basic
    let messageCloseContainer: aabridge_sd_bus_message_close_container
    let messageAppendArray: aabridge_sd_bus_message_append_array
    let addObjectManager: aabridge_sd_bus_add_object_manager
    let addObjectVtable: aabridge_sd_bus_add_object_vtable
    let messageNewMethodCall: aabridge_sd_bus_message_new_method_call
    let messageUnref: aabridge_sd_bus_message_unref
    let errorFree: aabridge_sd_bus_error_free
    let call: aabridge_sd_bus_call
    let messageGetMember: aabridge_sd_bus_message_get_member
    let messageGetPath: aabridge_sd_bus_message_get_path
    let messagePeekType: aabridge_sd_bus_message_peek_type
    let messageReadBasic: aabridge_sd_bus_message_read_basic
    let messageReadArray: aabridge_sd_bus_message_read_array
    let messageEnterContainer: aabridge_sd_bus_message_enter_container
    let messageSkip: aabridge_sd_bus_message_skip
    let messageExitContainer: aabridge_sd_bus_message_exit_container
    /// What the exported monitor's C callbacks call (its user data), and the monitor's vtable:
    /// allocated once per load and never freed, since sd-bus may use them for as long as the
    /// process runs.
    let monitorCalls: UnsafeMutablePointer<aabridge_sd_monitor_calls>
    let monitorVtable: UnsafeMutablePointer<sd_bus_vtable>

    /// The shared object opened: Debian's libsystemd0 (the soname, not the `-dev` symlink).
    static let libraryName = "libsystemd.so.0"

    /// The library, opened once for the process; the error when it cannot be.
    private static let loaded: Result<LibSystemd, LibSystemdError> = Result { () throws(LibSystemdError) in
        try LibSystemd(libraryName)
    }

    /// The process's libsystemd.
    static func shared() -> Result<LibSystemd, LibSystemdError> { loaded }

    /// Opens `name` and looks up every function; a separate handle per call (tests give a name
    /// that does not exist).
    ///
    /// - Throws: ``LibSystemdError`` with ``missingMessage(_:reason:)``.
    init(_ name: String) throws(LibSystemdError) {
        guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else {
            throw LibSystemdError(description: Self.missingMessage(name, reason: dlerror().map { String(cString: $0) }))
        }
        func symbol<T>(_ function: String, as type: T.Type) throws(LibSystemdError) -> T {
            guard let address = dlsym(handle, function) else {
                let reason = "it has no \(function): not libsystemd, or too old a one"
                throw LibSystemdError(description: Self.missingMessage(name, reason: reason))
            }
            return unsafeBitCast(address, to: type)
        }
        process = try symbol("sd_bus_process", as: aabridge_sd_bus_process.self)
        wait = try symbol("sd_bus_wait", as: aabridge_sd_bus_wait.self)
        new = try symbol("sd_bus_new", as: aabridge_sd_bus_new.self)
        setAddress = try symbol("sd_bus_set_address", as: aabridge_sd_bus_set_address.self)
        setBusClient = try symbol("sd_bus_set_bus_client", as: aabridge_sd_bus_set_bus_client.self)
        start = try symbol("sd_bus_start", as: aabridge_sd_bus_start.self)
        openSystem = try symbol("sd_bus_open_system", as: aabridge_sd_bus_open_system.self)
        unref = try symbol("sd_bus_unref", as: aabridge_sd_bus_unref.self)
        matchSignal = try symbol("sd_bus_match_signal", as: aabridge_sd_bus_match_signal.self)
        slotUnref = try symbol("sd_bus_slot_unref", as: aabridge_sd_bus_slot_unref.self)
        flushCloseUnref = try symbol("sd_bus_flush_close_unref", as: aabridge_sd_bus_flush_close_unref.self)
        messageOpenContainer = try symbol("sd_bus_message_open_container", as: aabridge_sd_bus_message_open_container.self)
        messageAppendBasic = try symbol("sd_bus_message_append_basic", as: aabridge_sd_bus_message_append_basic.self)
        messageCloseContainer = try symbol("sd_bus_message_close_container", as: aabridge_sd_bus_message_close_container.self)
        messageAppendArray = try symbol("sd_bus_message_append_array", as: aabridge_sd_bus_message_append_array.self)
        addObjectManager = try symbol("sd_bus_add_object_manager", as: aabridge_sd_bus_add_object_manager.self)
        addObjectVtable = try symbol("sd_bus_add_object_vtable", as: aabridge_sd_bus_add_object_vtable.self)
        messageNewMethodCall = try symbol("sd_bus_message_new_method_call", as: aabridge_sd_bus_message_new_method_call.self)
        messageUnref = try symbol("sd_bus_message_unref", as: aabridge_sd_bus_message_unref.self)
        errorFree = try symbol("sd_bus_error_free", as: aabridge_sd_bus_error_free.self)
        call = try symbol("sd_bus_call", as: aabridge_sd_bus_call.self)
        messageGetMember = try symbol("sd_bus_message_get_member", as: aabridge_sd_bus_message_get_member.self)
        messageGetPath = try symbol("sd_bus_message_get_path", as: aabridge_sd_bus_message_get_path.self)
        messagePeekType = try symbol("sd_bus_message_peek_type", as: aabridge_sd_bus_message_peek_type.self)
        messageReadBasic = try symbol("sd_bus_message_read_basic", as: aabridge_sd_bus_message_read_basic.self)
        messageReadArray = try symbol("sd_bus_message_read_array", as: aabridge_sd_bus_message_read_array.self)
        messageEnterContainer = try symbol("sd_bus_message_enter_container", as: aabridge_sd_bus_message_enter_container.self)
        messageSkip = try symbol("sd_bus_message_skip", as: aabridge_sd_bus_message_skip.self)
        messageExitContainer = try symbol("sd_bus_message_exit_container", as: aabridge_sd_bus_message_exit_container.self)
        let reply = try symbol("sd_bus_reply_method_return", as: aabridge_sd_bus_reply_method_return.self)
        let format = try symbol("sd_bus_object_vtable_format", as: UnsafePointer<UInt32>.self)
        monitorCalls = .allocate(capacity: 1)
        monitorCalls.initialize(
            to: aabridge_sd_monitor_calls(
                reply_method_return: reply, append_basic: messageAppendBasic, append_array: messageAppendArray,
                open_container: messageOpenContainer, close_container: messageCloseContainer))
        monitorVtable = .allocate(capacity: Int(AABRIDGE_MONITOR_VTABLE_COUNT))
        aabridge_monitor_vtable_make(monitorVtable, format)
    }

    /// What an operator reads when libsystemd cannot be opened.
    static func missingMessage(_ name: String, reason: String?) -> String {
        "the bluez gateway needs libsystemd's sd-bus (\(name), Debian's package libsystemd0), which cannot be loaded: "
            + (reason ?? "no reason given") + "; install libsystemd0"
    }
}
