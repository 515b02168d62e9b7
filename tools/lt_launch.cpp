// lt-launch: runs a program as the ranks of a data-parallel job through OpenMPI's mpirun, with
// each rank's thread count and core binding set, LT_* variables and PYTHONPATH passed to every
// rank, and running as root handled. It replaces itself with mpirun (exec), so Ctrl-C and kill
// reach mpirun, which ends every rank, and its exit status is mpirun's. docs/DISTRIBUTED.md.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <netdb.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "ir/error.h"
#include "tools/cli.h"

extern char** environ;

namespace {

struct Host {
  std::string name;
  int slots = 0;
};

// "a:2,b" -> {a,2},{b,per_node}.
std::vector<Host> parse_hosts(const std::string& spec, int per_node) {
  std::vector<Host> hosts;
  size_t pos = 0;
  while (pos <= spec.size()) {
    const size_t comma = std::min(spec.find(',', pos), spec.size());
    const std::string item = spec.substr(pos, comma - pos);
    pos = comma + 1;
    const size_t colon = item.find(':');
    Host h{item.substr(0, colon), per_node};
    if (colon != std::string::npos) {
      const std::string n = item.substr(colon + 1);
      char* end = nullptr;
      const long v = std::strtol(n.c_str(), &end, 10);
      if (n.empty() || *end != '\0' || v < 1 || v > 4096)
        throw lt::InputError(fmt::format("--hosts: '{}': slots must be an integer from 1 to 4096",
                                         item));
      h.slots = static_cast<int>(v);
    }
    if (h.name.empty())
      throw lt::InputError(fmt::format("--hosts: empty host name in '{}'", spec));
    // A name that does not resolve fails here in one line, not in mpirun's remote launcher.
    addrinfo* found = nullptr;
    if (getaddrinfo(h.name.c_str(), nullptr, nullptr, &found) != 0)
      throw lt::InputError(fmt::format("--hosts: cannot resolve host '{}'", h.name));
    freeaddrinfo(found);
    hosts.push_back(h);
  }
  return hosts;
}

// Whether `program` names an executable file (a path, or a name found on PATH).
bool executable(const std::string& program) {
  if (program.find('/') != std::string::npos) return access(program.c_str(), X_OK) == 0;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t pos = 0;
  while (pos <= dirs.size()) {
    const size_t colon = std::min(dirs.find(':', pos), dirs.size());
    const std::string dir = dirs.substr(pos, colon - pos);
    pos = colon + 1;
    if (access(((dir.empty() ? "." : dir) + "/" + program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789_-./:=,@%+") == std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// The command line: lt-launch's own flags, and the program to run with its arguments.
struct Launch {
  int nproc = 1;
  std::string hosts_spec, hostfile, bind = "cores";
  int threads = 0;
  bool dry_run = false, oversubscribe = false;
  std::vector<std::string> mca;
  bool has_separator = false;        ///< whether a -- was given
  std::vector<std::string> command;  ///< after the first --
};

void add_flags(CLI::App& app, Launch& l) {
  app.set_version_flag("--version", "lt-launch 0.1");
  app.add_option("--nproc-per-node,-n", l.nproc, "ranks per host")
      ->check(lt::cli::integer_at_least(1))
      ->capture_default_str();
  auto* hosts_opt = app.add_option("--hosts", l.hosts_spec,
                                   "hosts as host[:ranks],... (ranks default: --nproc-per-node); "
                                   "default: this host only");
  app.add_option("--hostfile", l.hostfile, "an OpenMPI hostfile (host slots=N per line)")
      ->check(CLI::ExistingFile)
      ->excludes(hosts_opt);
  app.add_option("--threads-per-rank,-t", l.threads,
                 "threads of each rank (LT_NUM_THREADS); default: this host's cores / ranks here")
      ->check(lt::cli::integer_at_least(1));
  app.add_option("--bind", l.bind, "bind each rank to its own cores, or not")
      ->check(CLI::IsMember({"cores", "none"}))
      ->capture_default_str();
  app.add_flag("--oversubscribe", l.oversubscribe,
               "allow more ranks than cores (binding is then off, and LT_SPIN_US=0 unless set)");
  app.add_option("--mca", l.mca, "an OpenMPI parameter: --mca btl tcp,self (repeatable)")
      ->expected(2)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_flag("--dry-run", l.dry_run, "print the mpirun command instead of running it");
  app.footer("Everything after -- is the program and its arguments.\n");
}

/// The program's own arguments never reach CLI11: the command line is split at the first --.
/// Returns how many arguments are lt-launch's (argv[0] included).
int split_at_separator(int argc, char** argv, Launch& l) {
  int own = 1;
  while (own < argc && std::strcmp(argv[own], "--") != 0) ++own;
  for (int i = own + 1; i < argc; ++i) l.command.emplace_back(argv[i]);
  l.has_separator = own < argc;
  return own;
}

void check_program(const Launch& l) {
  if (!l.has_separator || l.command.empty())
    throw lt::InputError("no program given: lt-launch [options] -- PROGRAM [ARGS...]");
  if (!executable(l.command[0]))
    throw lt::InputError(fmt::format("program '{}' is not an executable file", l.command[0]));
  if (l.mca.size() % 2 != 0) throw lt::InputError("--mca takes a parameter name and a value");
}

/// Where the ranks run: the --hosts, the ranks on this host and in all (0: the hostfile's), and
/// the threads of each.
struct Layout {
  std::vector<Host> hosts;
  int local_ranks = 0, total = 0, threads = 0;
};

Layout plan_layout(const Launch& l) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  Layout y;
  if (!l.hosts_spec.empty()) y.hosts = parse_hosts(l.hosts_spec, l.nproc);
  y.local_ranks = l.nproc;
  for (const Host& h : y.hosts) y.total += h.slots;
  if (y.hosts.empty() && l.hostfile.empty()) y.total = l.nproc;
  if (!y.hosts.empty()) y.local_ranks = y.hosts.front().slots;
  y.threads = l.threads != 0 ? l.threads : std::max(1, cores / y.local_ranks);
  if (!l.oversubscribe && y.hosts.empty() && l.hostfile.empty() &&
      y.local_ranks * y.threads > cores)
    throw lt::InputError(
        fmt::format("{} ranks x {} threads need {} cores and this host has {}: pass fewer ranks or "
                    "threads, or --oversubscribe",
                    y.local_ranks, y.threads, y.local_ranks * y.threads, cores));
  return y;
}

using Args = std::vector<std::string>;

/// mpirun's flags for where the ranks run and which cores they are bound to.
void add_placement(Args& cmd, const Launch& l, const Layout& y) {
  if (geteuid() == 0) cmd.push_back("--allow-run-as-root");  // OpenMPI refuses root otherwise
  if (y.total > 0) cmd.insert(cmd.end(), {"-np", std::to_string(y.total)});
  if (!y.hosts.empty()) {
    std::string h;
    for (const Host& x : y.hosts)
      h += fmt::format("{}{}:{}", h.empty() ? "" : ",", x.name, x.slots);
    cmd.insert(cmd.end(), {"--host", h});
  }
  if (!l.hostfile.empty()) cmd.insert(cmd.end(), {"--hostfile", l.hostfile});
  if (l.oversubscribe) cmd.push_back("--oversubscribe");
  if (l.bind == "cores" && !l.oversubscribe) {
    // Each rank gets `threads` consecutive cores of its own.
    cmd.insert(cmd.end(), {"--map-by", fmt::format("slot:PE={}", y.threads), "--bind-to", "core"});
  } else {
    cmd.insert(cmd.end(), {"--bind-to", "none"});
  }
}

/// The --mca parameters given, then lt-launch's defaults for those not given.
void add_mca(Args& cmd, const Launch& l) {
  bool copy_mechanism_given = false, iallreduce_given = false, send_size_given = false;
  for (size_t i = 0; i + 1 < l.mca.size(); i += 2) {
    cmd.insert(cmd.end(), {"--mca", l.mca[i], l.mca[i + 1]});
    copy_mechanism_given |= l.mca[i] == "btl_vader_single_copy_mechanism";
    iallreduce_given |= l.mca[i] == "coll_libnbc_iallreduce_algorithm";
    send_size_given |= l.mca[i] == "btl_vader_max_send_size";
  }
  // On one host OpenMPI's shared-memory transport moves large messages with one
  // process_vm_readv call (CMA) by default; at the gradient sizes here (up to a few MB) plain
  // copies through shared memory are faster. --mca btl_vader_single_copy_mechanism cma restores
  // it.
  if (!copy_mechanism_given)
    cmd.insert(cmd.end(), {"--mca", "btl_vader_single_copy_mechanism", "none"});
  // The step's gradient buckets are nonblocking all-reduces (MPI_Iallreduce, OpenMPI's libnbc),
  // in place. For fewer than 4 ranks or in place, libnbc reduces to rank 0 and broadcasts back:
  // two full-size transfers one after the other, slower than the blocking MPI_Allreduce.
  // Reduce-scatter then all-gather (algorithm 3, Rabenseifner's) moves half the data each way.
  // Every rank still gets the same bits.
  if (!iallreduce_given) cmd.insert(cmd.end(), {"--mca", "coll_libnbc_iallreduce_algorithm", "3"});
  // The shared-memory copies go in fragments of btl_vader_max_send_size (32 KiB by default):
  // 128 KiB ones make a large bucket's all-reduce take fewer rounds and less time; 1 MiB
  // fragments are slower again.
  if (!send_size_given) cmd.insert(cmd.end(), {"--mca", "btl_vader_max_send_size", "131072"});
}

/// Every rank, on every host, sees the LT_* settings and PYTHONPATH (Python ranks import the
/// package from where this shell does); the thread count is per rank.
void add_environment(Args& cmd, const Launch& l, const Layout& y) {
  cmd.insert(cmd.end(), {"-x", fmt::format("LT_NUM_THREADS={}", y.threads)});
  // Ranks that may share cores: a thread that polls for its next launch would hold a core
  // another rank needs, so the pools sleep at once unless the user says otherwise.
  if (l.oversubscribe && !std::getenv("LT_SPIN_US")) cmd.insert(cmd.end(), {"-x", "LT_SPIN_US=0"});
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    const std::string name = kv.substr(0, kv.find('='));
    if ((name.rfind("LT_", 0) == 0 && name != "LT_NUM_THREADS") || name == "PYTHONPATH")
      cmd.insert(cmd.end(), {"-x", name});
  }
}

Args mpirun_command(const Launch& l, const Layout& y) {
  Args cmd{"mpirun"};
  add_placement(cmd, l, y);
  add_mca(cmd, l);
  add_environment(cmd, l, y);
  cmd.insert(cmd.end(), l.command.begin(), l.command.end());
  return cmd;
}

/// Prints the command (--dry-run), or replaces this process with it.
void run(Args cmd, bool dry_run) {
  std::string line;
  for (const std::string& a : cmd) line += (line.empty() ? "" : " ") + shell_quote(a);
  if (dry_run) {
    fmt::print("{}\n", line);
    return;
  }
  std::fflush(stdout);
  std::vector<char*> args;
  for (std::string& a : cmd) args.push_back(a.data());
  args.push_back(nullptr);
  execvp("mpirun", args.data());
  throw lt::Error(fmt::format("cannot run mpirun: {} (install openmpi-bin)", std::strerror(errno)));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "lt-launch [options] -- PROGRAM [ARGS...]\n"
      "Runs PROGRAM as the ranks of a data-parallel job (OpenMPI's mpirun), e.g.\n"
      "  lt-launch --nproc-per-node 2 -- build/examples/fmnist_mlp --compiler-opt\n"
      "Ranks on one host are bound to disjoint cores with --threads-per-rank threads each; every\n"
      "LT_* variable and PYTHONPATH reach every rank. Exit status: mpirun's (2: bad usage here)."};
  Launch l;
  add_flags(app, l);
  const int own = split_at_separator(argc, argv, l);
  return lt::cli::run(app, own, argv, [&] {
    check_program(l);
    run(mpirun_command(l, plan_layout(l)), l.dry_run);
  });
}
