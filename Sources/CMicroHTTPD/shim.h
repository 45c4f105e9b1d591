#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <microhttpd.h>

// MHD_start_daemon is variadic, which Swift cannot call: this fixed-argument wrapper passes
// the options the bridge uses. One thread per connection (the bridge's handlers wait for the
// runtime's answer; the connection limit bounds the threads), bound to `address` only.
static inline struct MHD_Daemon *aabridge_mhd_start(
    const struct sockaddr_in *address, unsigned int connection_limit, unsigned int timeout_seconds,
    MHD_AccessHandlerCallback handler, void *handler_context,
    MHD_RequestCompletedCallback completed, void *completed_context) {
    return MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL,
        ntohs(address->sin_port), NULL, NULL, handler, handler_context,
        MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)address,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
        MHD_OPTION_NOTIFY_COMPLETED, completed, completed_context,
        MHD_OPTION_END);
}

// The reader's "end of stream" is a macro with a cast, which Swift does not import.
static inline ssize_t aabridge_mhd_end_of_stream(void) { return MHD_CONTENT_READER_END_OF_STREAM; }

// The port the daemon listens on (the kernel's choice when 0 was asked for).
static inline uint16_t aabridge_mhd_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

// A response with its own copy of `size` bytes.
static inline struct MHD_Response *aabridge_mhd_copied_response(size_t size, const void *bytes) {
    return MHD_create_response_from_buffer(size, (void *)bytes, MHD_RESPMEM_MUST_COPY);
}
