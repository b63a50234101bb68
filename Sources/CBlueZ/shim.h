// Debian's libbluetooth-dev (BlueZ). Used by the mesh transport (a later issue).
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>
