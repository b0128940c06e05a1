// bloomery: approximate membership filters. Including this header brings in the whole library.
#pragma once

#include "bloomery/advise.hpp"
#include "bloomery/bit_array.hpp"
#include "bloomery/blocked_bloom_filter.hpp"
#include "bloomery/bloom_filter.hpp"
#include "bloomery/counting_bloom_filter.hpp"
#include "bloomery/cuckoo_filter.hpp"
#include "bloomery/file.hpp"
#include "bloomery/format.hpp"
#include "bloomery/hash.hpp"
#include "bloomery/scalable_bloom_filter.hpp"
#include "bloomery/sizing.hpp"
#include "bloomery/static_filter.hpp"
#include "bloomery/version.hpp"
