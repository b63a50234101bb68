// Debian's libsodium-dev: Argon2id (crypto_pwhash), ChaCha20 (crypto_stream_chacha20_ietf),
// ChaCha20-Poly1305 and constant-time helpers.
#include <sodium.h>
