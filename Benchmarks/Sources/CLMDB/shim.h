#include <lmdb.h>
