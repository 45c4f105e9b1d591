// libsystemd's sd-bus, the D-Bus client of the bluez gateway (Sources/BlueZ). Swift calls only
// its non-variadic functions: Swift cannot call C's variadic ones.
#include <systemd/sd-bus.h>

// The passive-scanning monitor the bluez gateway exports (org.bluez.AdvertisementMonitor1,
// BlueZ's doc/org.bluez.AdvertisementMonitor.rst): an sd-bus vtable can only be built with
// sd-bus's C macros, so it lives here, with its two properties and four methods, which do
// nothing but answer (what the adapter hears still arrives as the devices' PropertiesChanged).

static inline int aabridge_monitor_answer(sd_bus_message *message, void *user, sd_bus_error *error) {
    (void)user;
    (void)error;
    return sd_bus_reply_method_return(message, NULL);
}

static inline int aabridge_monitor_type(sd_bus *bus, const char *path, const char *interface, const char *property,
                                        sd_bus_message *reply, void *user, sd_bus_error *error) {
    (void)bus, (void)path, (void)interface, (void)property, (void)user, (void)error;
    return sd_bus_message_append_basic(reply, 's', "or_patterns");
}

// One pattern (start 0, AD type, content), a(yyay)'s element.
static inline int aabridge_monitor_pattern(sd_bus_message *reply, uint8_t type, const uint8_t *content, size_t size) {
    uint8_t start = 0;
    int result = sd_bus_message_open_container(reply, 'r', "yyay");
    if (result >= 0) result = sd_bus_message_append_basic(reply, 'y', &start);
    if (result >= 0) result = sd_bus_message_append_basic(reply, 'y', &type);
    if (result >= 0) result = sd_bus_message_append_array(reply, 'y', content, size);
    if (result >= 0) result = sd_bus_message_close_container(reply);
    return result;
}

// Apple's company id (0x004C) in manufacturer data (AD type 0xFF), little-endian; Google's
// Fast Pair service (0xFE2C) in 16-bit UUID service data (AD type 0x16).
static inline int aabridge_monitor_patterns(sd_bus *bus, const char *path, const char *interface, const char *property,
                                            sd_bus_message *reply, void *user, sd_bus_error *error) {
    (void)bus, (void)path, (void)interface, (void)property, (void)user, (void)error;
    static const uint8_t apple[] = {0x4C, 0x00};
    static const uint8_t fastPair[] = {0x2C, 0xFE};
    int result = sd_bus_message_open_container(reply, 'a', "(yyay)");
    if (result >= 0) result = aabridge_monitor_pattern(reply, 0xFF, apple, sizeof apple);
    if (result >= 0) result = aabridge_monitor_pattern(reply, 0x16, fastPair, sizeof fastPair);
    if (result >= 0) result = sd_bus_message_close_container(reply);
    return result;
}

static const sd_bus_vtable aabridge_monitor_vtable[] = {
    SD_BUS_VTABLE_START(0),
    SD_BUS_PROPERTY("Type", "s", aabridge_monitor_type, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_PROPERTY("Patterns", "a(yyay)", aabridge_monitor_patterns, 0, SD_BUS_VTABLE_PROPERTY_CONST),
    SD_BUS_METHOD("Release", "", "", aabridge_monitor_answer, 0),
    SD_BUS_METHOD("Activate", "", "", aabridge_monitor_answer, 0),
    SD_BUS_METHOD("DeviceFound", "o", "", aabridge_monitor_answer, 0),
    SD_BUS_METHOD("DeviceLost", "o", "", aabridge_monitor_answer, 0),
    SD_BUS_VTABLE_END};

static inline const sd_bus_vtable *aabridge_monitor_vtable_pointer(void) { return aabridge_monitor_vtable; }
