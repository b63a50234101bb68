// Debian's libsystemd-dev: sd-bus, the D-Bus client the BlueZ link layer talks to bluetoothd with.
// Only its non-variadic calls are used from Swift (append_basic, open_container, read_basic, …).
#include <systemd/sd-bus.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <poll.h>
