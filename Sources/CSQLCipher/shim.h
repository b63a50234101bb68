// Debian's libsqlcipher-dev (SQLCipher 3.4 on SQLite 3.15). SQLITE_HAS_CODEC exposes sqlite3_key.
#ifndef SQLITE_HAS_CODEC
#define SQLITE_HAS_CODEC 1
#endif
#include <sqlite3.h>

// sqlite3_destructor_type constants are macros Swift cannot import.
#include <stddef.h>
static inline void (*csqlcipher_transient(void))(void *) { return (void (*)(void *))-1; }
