// BlueZ's socket definitions (Debian's libbluetooth-dev): AF_BLUETOOTH, BTPROTO_L2CAP and
// struct sockaddr_l2. Only the headers: the address is filled in by hand, so nothing links
// libbluetooth and the runtime image needs no BlueZ library.
#include <sys/socket.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/l2cap.h>
