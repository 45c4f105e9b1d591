// libsystemd's sd-bus, the D-Bus client of the bluez gateway (Sources/BlueZ): its declarations
// only, nothing links it. The BlueZ module opens libsystemd.so.0 with dlopen when the gateway
// starts (LibSystemd.swift), so a bridge without a `bluez` gateway never maps it, nor libgcrypt,
// liblzma, libzstd, liblz4 and libcap. Every call goes through a function pointer from dlsym;
// Swift calls only non-variadic functions.
#include <systemd/sd-bus.h>

// The type of each function the BlueZ module or this header calls, for dlsym's result (`typeof`
// does not reference the symbol).
typedef __typeof__(&sd_bus_process) aabridge_sd_bus_process;
typedef __typeof__(&sd_bus_wait) aabridge_sd_bus_wait;
typedef __typeof__(&sd_bus_new) aabridge_sd_bus_new;
typedef __typeof__(&sd_bus_set_address) aabridge_sd_bus_set_address;
typedef __typeof__(&sd_bus_set_bus_client) aabridge_sd_bus_set_bus_client;
typedef __typeof__(&sd_bus_start) aabridge_sd_bus_start;
typedef __typeof__(&sd_bus_open_system) aabridge_sd_bus_open_system;
typedef __typeof__(&sd_bus_unref) aabridge_sd_bus_unref;
typedef __typeof__(&sd_bus_match_signal) aabridge_sd_bus_match_signal;
typedef __typeof__(&sd_bus_slot_unref) aabridge_sd_bus_slot_unref;
typedef __typeof__(&sd_bus_flush_close_unref) aabridge_sd_bus_flush_close_unref;
typedef __typeof__(&sd_bus_message_open_container) aabridge_sd_bus_message_open_container;
typedef __typeof__(&sd_bus_message_append_basic) aabridge_sd_bus_message_append_basic;
typedef __typeof__(&sd_bus_message_close_container) aabridge_sd_bus_message_close_container;
typedef __typeof__(&sd_bus_message_append_array) aabridge_sd_bus_message_append_array;
typedef __typeof__(&sd_bus_add_object_manager) aabridge_sd_bus_add_object_manager;
typedef __typeof__(&sd_bus_add_object_vtable) aabridge_sd_bus_add_object_vtable;
typedef __typeof__(&sd_bus_message_new_method_call) aabridge_sd_bus_message_new_method_call;
typedef __typeof__(&sd_bus_message_unref) aabridge_sd_bus_message_unref;
typedef __typeof__(&sd_bus_error_free) aabridge_sd_bus_error_free;
typedef __typeof__(&sd_bus_call) aabridge_sd_bus_call;
typedef __typeof__(&sd_bus_message_get_member) aabridge_sd_bus_message_get_member;
typedef __typeof__(&sd_bus_message_get_path) aabridge_sd_bus_message_get_path;
typedef __typeof__(&sd_bus_message_peek_type) aabridge_sd_bus_message_peek_type;
typedef __typeof__(&sd_bus_message_read_basic) aabridge_sd_bus_message_read_basic;
typedef __typeof__(&sd_bus_message_read_array) aabridge_sd_bus_message_read_array;
typedef __typeof__(&sd_bus_message_enter_container) aabridge_sd_bus_message_enter_container;
typedef __typeof__(&sd_bus_message_skip) aabridge_sd_bus_message_skip;
typedef __typeof__(&sd_bus_message_exit_container) aabridge_sd_bus_message_exit_container;
typedef __typeof__(&sd_bus_reply_method_return) aabridge_sd_bus_reply_method_return;

// What the monitor's callbacks below call: they get it as the exported object's user data.
struct aabridge_sd_monitor_calls {
    aabridge_sd_bus_reply_method_return reply_method_return;
    aabridge_sd_bus_message_append_basic append_basic;
    aabridge_sd_bus_message_append_array append_array;
    aabridge_sd_bus_message_open_container open_container;
    aabridge_sd_bus_message_close_container close_container;
};

// The passive-scanning monitor the bluez gateway exports (org.bluez.AdvertisementMonitor1,
// BlueZ's doc/org.bluez.AdvertisementMonitor.rst): an sd-bus vtable can only be built with
// sd-bus's C macros, so it lives here, with its two properties and four methods, which do
// nothing but answer (what the adapter hears still arrives as the devices' PropertiesChanged).
// `user` is the object's user data: the struct aabridge_sd_monitor_calls of the loaded library.

static inline int aabridge_monitor_answer(sd_bus_message *message, void *user, sd_bus_error *error) {
    (void)error;
    return ((const struct aabridge_sd_monitor_calls *)user)->reply_method_return(message, NULL);
}

static inline int aabridge_monitor_type(sd_bus *bus, const char *path, const char *interface, const char *property,
                                        sd_bus_message *reply, void *user, sd_bus_error *error) {
    (void)bus, (void)path, (void)interface, (void)property, (void)error;
    return ((const struct aabridge_sd_monitor_calls *)user)->append_basic(reply, 's', "or_patterns");
}

// One pattern (start 0, AD type, content), a(yyay)'s element.
static inline int aabridge_monitor_pattern(
    const struct aabridge_sd_monitor_calls *calls, sd_bus_message *reply, uint8_t type, const uint8_t *content, size_t size) {
    uint8_t start = 0;
    int result = calls->open_container(reply, 'r', "yyay");
    if (result >= 0) result = calls->append_basic(reply, 'y', &start);
    if (result >= 0) result = calls->append_basic(reply, 'y', &type);
    if (result >= 0) result = calls->append_array(reply, 'y', content, size);
    if (result >= 0) result = calls->close_container(reply);
    return result;
}

// Apple's company id (0x004C) in manufacturer data (AD type 0xFF), little-endian; Google's
// Fast Pair service (0xFE2C) in 16-bit UUID service data (AD type 0x16).
static inline int aabridge_monitor_patterns(sd_bus *bus, const char *path, const char *interface, const char *property,
                                            sd_bus_message *reply, void *user, sd_bus_error *error) {
    (void)bus, (void)path, (void)interface, (void)property, (void)error;
    const struct aabridge_sd_monitor_calls *calls = user;
    static const uint8_t apple[] = {0x4C, 0x00};
    static const uint8_t fastPair[] = {0x2C, 0xFE};
    int result = calls->open_container(reply, 'a', "(yyay)");
    if (result >= 0) result = aabridge_monitor_pattern(calls, reply, 0xFF, apple, sizeof apple);
    if (result >= 0) result = aabridge_monitor_pattern(calls, reply, 0x16, fastPair, sizeof fastPair);
    if (result >= 0) result = calls->close_container(reply);
    return result;
}

// The monitor's vtable has this many entries (its start, two properties, four methods, its end).
#define AABRIDGE_MONITOR_VTABLE_COUNT 8

// Writes the monitor's vtable to `out` (AABRIDGE_MONITOR_VTABLE_COUNT entries, kept for as long
// as the object is exported). Made at run time, not a static table: SD_BUS_VTABLE_START takes
// the address of libsystemd's sd_bus_object_vtable_format, which a bridge that does not link
// libsystemd has only from dlsym (`format`).
static inline void aabridge_monitor_vtable_make(sd_bus_vtable *out, const unsigned *format) {
    const sd_bus_vtable entries[AABRIDGE_MONITOR_VTABLE_COUNT - 1] = {
        SD_BUS_PROPERTY("Type", "s", aabridge_monitor_type, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Patterns", "a(yyay)", aabridge_monitor_patterns, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_METHOD("Release", "", "", aabridge_monitor_answer, 0),
        SD_BUS_METHOD("Activate", "", "", aabridge_monitor_answer, 0),
        SD_BUS_METHOD("DeviceFound", "o", "", aabridge_monitor_answer, 0),
        SD_BUS_METHOD("DeviceLost", "o", "", aabridge_monitor_answer, 0),
        SD_BUS_VTABLE_END};
    out[0] = (sd_bus_vtable){
        .type = _SD_BUS_VTABLE_START,
        .flags = 0,
        .x = {.start = {.element_size = sizeof(sd_bus_vtable), .features = _SD_BUS_VTABLE_PARAM_NAMES, .vtable_format_reference = format}},
    };
    for (int i = 0; i < AABRIDGE_MONITOR_VTABLE_COUNT - 1; i++) out[i + 1] = entries[i];
}
