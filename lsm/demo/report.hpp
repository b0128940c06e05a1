// The demo's results: a table for a person, or one JSON object (--json).
#pragma once

#include <vector>

#include "measure.hpp"
#include "options.hpp"
#include "work_dir.hpp"

namespace bloomery_lsm_demo {

void print_text(const config& c, const std::vector<kind_result>& results, const work_dir& wd,
                double wall_seconds);
void print_json(const config& c, const std::vector<kind_result>& results, const work_dir& wd,
                bool correct, double wall_seconds);

}  // namespace bloomery_lsm_demo
