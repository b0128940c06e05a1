// bloomery as a user compiles it with -march=native. The macro renames the library's namespace
// in this translation unit only, so this copy of the inline library does not collide with
// bloomery_o3.cpp's under the one-definition rule.
#define bloomery bloomery_native
#define BLOOMERY_PEERS_SIDE_FN bloomery_native_side
#include "bloomery_side.hpp"
