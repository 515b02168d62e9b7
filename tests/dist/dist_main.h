// The main() every MPI test binary shares (dist_main.cpp): `--world N` says how many ranks the
// test expects to run as (lt-launch -n N, or 1 when started alone), then lt::dist::init().
#pragma once

namespace lt::testing {

/// The N of --world N (1 without it).
int expected_world();

}  // namespace lt::testing
