// bloomery as a user's default build compiles it: plain -O3, no -march (the AVX2 probe is then
// reached through the library's run-time dispatch). The macro renames the library's namespace
// in this translation unit only (see bloomery_native.cpp).
#define bloomery bloomery_o3
#define BLOOMERY_PEERS_SIDE_FN bloomery_o3_side
#include "bloomery_side.hpp"
