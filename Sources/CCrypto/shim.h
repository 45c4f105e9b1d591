#include <openssl/evp.h>
#include <openssl/aes.h>
