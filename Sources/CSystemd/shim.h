// libsystemd's sd-bus, the D-Bus client of the bluez gateway (Sources/BlueZ). Only its
// non-variadic calls are used: Swift cannot call C's variadic functions.
#include <systemd/sd-bus.h>
