#include "controller/apps/app_cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

namespace scalws::controller {

using common::Status;

namespace {

constexpr uint64_t kV1Unlimited = 1ULL << 62;  // v1 shows "no limit" as a page-rounded 2^63-1

std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::vector<std::string> split(const std::string& text, char by) {
  std::vector<std::string> out;
  std::string part;
  std::istringstream in(text);
  while (std::getline(in, part, by)) out.push_back(part);
  return out;
}

bool hasWord(const std::string& text, const std::string& word) {
  std::istringstream in(text);
  std::string w;
  while (in >> w) {
    if (w == word) return true;
  }
  return false;
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescapeMount(const std::string& field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] == '\\' && i + 3 < field.size()) {
      const char* o = field.c_str() + i + 1;
      if (o[0] >= '0' && o[0] <= '3' && o[1] >= '0' && o[1] <= '7' && o[2] >= '0' && o[2] <= '7') {
        out += static_cast<char>((o[0] - '0') * 64 + (o[1] - '0') * 8 + (o[2] - '0'));
        i += 3;
        continue;
      }
    }
    out += field[i];
  }
  return out;
}

struct Mount {
  std::string root;   // the hierarchy's directory mounted there
  std::string point;  // where
};

// The first mount of `fstype` (and, for v1, with `option` among its super options).
std::optional<Mount> findMount(const std::string& mountinfo, const std::string& fstype,
                               const std::string& option) {
  std::istringstream lines(mountinfo);
  std::string line;
  while (std::getline(lines, line)) {
    std::vector<std::string> f;
    std::istringstream words(line);
    std::string w;
    while (words >> w) f.push_back(w);
    size_t sep = 0;
    while (sep < f.size() && f[sep] != "-") ++sep;
    if (sep < 5 || sep + 3 >= f.size() || f[sep + 1] != fstype) continue;
    if (!option.empty()) {
      std::vector<std::string> opts = split(f[sep + 3], ',');
      if (std::find(opts.begin(), opts.end(), option) == opts.end()) continue;
    }
    return Mount{unescapeMount(f[3]), unescapeMount(f[4])};
  }
  return std::nullopt;
}

// The cgroup path of the /proc/PID/cgroup line for v2 (`controller` "") or the v1
// hierarchy that has `controller`.
std::optional<std::string> cgroupLine(const std::string& text, const std::string& controller) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    size_t a = line.find(':');
    size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    std::string id = line.substr(0, a);
    std::string controllers = line.substr(a + 1, b - a - 1);
    if (controller.empty()) {
      if (id == "0" && controllers.empty()) return line.substr(b + 1);
      continue;
    }
    std::vector<std::string> names = split(controllers, ',');
    if (std::find(names.begin(), names.end(), controller) != names.end()) {
      return line.substr(b + 1);
    }
  }
  return std::nullopt;
}

// `path` of /proc/PID/cgroup as seen under a mount of the hierarchy's `root`: "" for the
// mount itself, else "/a/b"; nullopt when that mount does not show it.
std::optional<std::string> underMount(const std::string& root, const std::string& path) {
  std::string r = root == "/" ? "" : root;
  std::string p = path == "/" ? "" : path;
  if (p.compare(0, r.size(), r) != 0 || (p.size() > r.size() && p[r.size()] != '/')) {
    return std::nullopt;
  }
  return p.substr(r.size());
}

std::string baseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string parentOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

Status mkdirOk(const std::string& path) {
  if (::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST) return Status();
  return common::errnoStatus(errno, "cannot make the cgroup " + path);
}

// cgroupfs takes one value per write(); O_CREAT only matters in a tree that imitates it.
Status writeValue(const std::string& path, const std::string& value, int extra_flags = O_TRUNC) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | extra_flags, 0644);
  if (fd < 0) return common::errnoStatus(errno, "cannot open " + path);
  ssize_t n = ::write(fd, value.data(), value.size());
  int err = n < 0 ? errno : EIO;
  ::close(fd);
  if (n != static_cast<ssize_t>(value.size())) {
    errno = err;  // for the caller's look at which error it was
    return common::errnoStatus(err, "cannot write \"" + value + "\" to " + path);
  }
  return Status();
}

std::optional<uint64_t> readNumber(const std::string& path) {
  std::string text = readText(path);
  if (text.empty()) return std::nullopt;
  if (text.compare(0, 3, "max") == 0) return 0;
  char* end = nullptr;
  unsigned long long n = std::strtoull(text.c_str(), &end, 10);
  if (end == text.c_str()) return std::nullopt;
  return static_cast<uint64_t>(n);
}

// "key value" lines (memory.events, memory.oom_control).
uint64_t readKeyed(const std::string& path, const std::string& key) {
  std::istringstream in(readText(path));
  std::string k;
  unsigned long long v = 0;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  return 0;
}

// The memory controller is handed to the children of `dir` (a v2 cgroup).
Status enableMemory(const std::string& dir) {
  if (hasWord(readText(dir + "/cgroup.subtree_control"), "memory")) return Status();
  Status s = writeValue(dir + "/cgroup.subtree_control", "+memory");
  if (!s.ok()) {
    bool busy = errno == EBUSY;
    return Status(s.code(), "cannot enable the memory controller below " + dir + ": " +
                                s.message() + (busy ? " (processes are left in it)" : ""));
  }
  return s;
}

// Every process of the v2 cgroup `from` into `to` (those that exit meanwhile are skipped).
void moveProcesses(const std::string& from, const std::string& to) {
  std::istringstream pids(readText(from + "/cgroup.procs"));
  std::string pid;
  while (pids >> pid) {
    Status moved = writeValue(to + "/cgroup.procs", pid + "\n", O_APPEND);
    (void)moved;  // ESRCH: gone; anything else shows as EBUSY when the controller is enabled
  }
}

Status removeCgroupDir(const std::string& path) {
  if (::rmdir(path.c_str()) == 0 || errno == ENOENT) return Status();
  if (errno == ENOTEMPTY) {
    // cgroupfs drops its interface files with the directory; a tree that only imitates
    // it holds plain files that must go first.
    if (DIR* d = ::opendir(path.c_str())) {
      while (dirent* e = ::readdir(d)) {
        if (e->d_type == DT_REG) ::unlink((path + "/" + e->d_name).c_str());
      }
      ::closedir(d);
    }
    if (::rmdir(path.c_str()) == 0) return Status();
  }
  return common::errnoStatus(errno, "cannot remove the cgroup " + path);
}

}  // namespace

CgroupHost CgroupHost::current() {
  CgroupHost host;
  host.self_cgroup = readText("/proc/self/cgroup");
  host.mountinfo = readText("/proc/self/mountinfo");
  return host;
}

AppCgroups AppCgroups::probe(const CgroupHost& host, std::string subtree) {
  AppCgroups out;
  out.root_ = host.root;
  out.subtree_ = std::move(subtree);

  std::string v2_problem;
  std::optional<Mount> v2 = findMount(host.mountinfo, "cgroup2", "");
  std::optional<std::string> v2_line = cgroupLine(host.self_cgroup, "");
  std::optional<std::string> v2_rel = v2 && v2_line ? underMount(v2->root, *v2_line) : std::nullopt;
  if (!v2) {
    v2_problem = "no cgroup2 hierarchy is mounted";
  } else if (!v2_line) {
    v2_problem = "the controller is in no cgroup v2 cgroup";
  } else if (!v2_rel) {
    v2_problem = "its cgroup " + *v2_line + " is not under " + v2->point;
  } else {
    bool in_leaf = baseName(*v2_rel) == kSupervisorLeaf;
    std::string base = in_leaf ? parentOf(*v2_rel) : *v2_rel;
    std::string dir = host.root + v2->point + base;
    std::string controllers = readText(dir + "/cgroup.controllers");
    if (!exists(dir + "/cgroup.controllers")) {
      v2_problem = dir + " is not a cgroup v2 directory";
    } else if (!hasWord(controllers, "memory")) {
      v2_problem = "the memory controller is not available in " + dir +
                   " (its cgroup.controllers lists: " +
                   (controllers.find_first_not_of(" \n") == std::string::npos
                        ? std::string("nothing")
                        : controllers.substr(0, controllers.find_last_not_of(" \n") + 1)) +
                   ")";
    } else if (::access((dir + "/cgroup.subtree_control").c_str(), W_OK) != 0) {
      v2_problem = dir + " is not delegated to the controller (cannot write its " +
                   "cgroup.subtree_control: " + std::strerror(errno) +
                   "); a systemd unit needs Delegate=yes";
    } else if (!in_leaf && baseName(base).ends_with(".service")) {
      v2_problem = "systemd started the controller in its unit's own cgroup " + dir +
                   ", which could then not start the next controller in it once the apps' "
                   "cgroups have the memory controller; the unit needs "
                   "DelegateSubgroup=supervisor (systemd 254 or later)";
    } else {
      out.version_ = Version::kV2;
      out.mount_ = host.root + v2->point;
      out.mount_root_ = v2->root == "/" ? "" : v2->root;
      out.base_ = base;
      // The root cgroup (no cgroup.type) may keep processes beside enabled controllers.
      out.move_to_leaf_ = !in_leaf && exists(dir + "/cgroup.type");
      return out;
    }
  }

  std::string v1_problem;
  std::optional<Mount> v1 = findMount(host.mountinfo, "cgroup", "memory");
  std::optional<std::string> v1_line = cgroupLine(host.self_cgroup, "memory");
  std::optional<std::string> v1_rel = v1 && v1_line ? underMount(v1->root, *v1_line) : std::nullopt;
  if (!v1) {
    v1_problem = "no v1 memory hierarchy is mounted";
  } else if (!v1_line) {
    v1_problem = "the controller is in no v1 memory cgroup";
  } else if (!v1_rel) {
    v1_problem = "its memory cgroup " + *v1_line + " is not under " + v1->point;
  } else {
    std::string dir = host.root + v1->point + *v1_rel;
    if (!exists(dir + "/memory.limit_in_bytes")) {
      v1_problem = dir + " is not a memory cgroup";
    } else if (::access(dir.c_str(), W_OK) != 0) {
      v1_problem = "cannot write " + dir + ": " + std::strerror(errno);
    } else {
      out.version_ = Version::kV1;
      out.mount_ = host.root + v1->point;
      out.mount_root_ = v1->root == "/" ? "" : v1->root;
      out.base_ = *v1_rel;
      return out;
    }
  }
  out.problem_ = "no memory cgroup the controller can use: cgroup v2: " + v2_problem +
                 "; cgroup v1: " + v1_problem;
  return out;
}

std::string AppCgroups::describe() const {
  switch (version_) {
    case Version::kV2:
      return "cgroup v2 " + mount_ + base_;
    case Version::kV1:
      return "cgroup v1 memory " + mount_ + base_;
    case Version::kNone:
      break;
  }
  return "none";
}

std::string AppCgroups::appDir(const std::string& app) const {
  return mount_ + base_ + "/" + subtree_ + "/" + app;
}

std::string AppCgroups::pathOf(const std::string& app, uint32_t index) const {
  return appDir(app) + "/" + std::to_string(index);
}

Status AppCgroups::setUp() {
  if (set_up_) return Status();
  if (!usable()) return Status(common::StatusCode::kFailedPrecondition, problem_);
  if (version_ == Version::kV2) {
    SCALWS_RETURN_IF_ERROR(setUpV2());
  } else {
    SCALWS_RETURN_IF_ERROR(mkdirOk(mount_ + base_ + "/" + subtree_));
  }
  set_up_ = true;
  return Status();
}

Status AppCgroups::setUpV2() {
  std::string dir = mount_ + base_;
  if (move_to_leaf_) {
    std::string leaf = dir + "/" + kSupervisorLeaf;
    SCALWS_RETURN_IF_ERROR(mkdirOk(leaf));
    // Processes forked meanwhile land in `dir` again: the kernel's EBUSY says so.
    Status enabled;
    for (int round = 0; round < 5; ++round) {
      moveProcesses(dir, leaf);
      enabled = enableMemory(dir);
      if (enabled.ok()) break;
    }
    SCALWS_RETURN_IF_ERROR(enabled);
  } else {
    SCALWS_RETURN_IF_ERROR(enableMemory(dir));
  }
  SCALWS_RETURN_IF_ERROR(mkdirOk(dir + "/" + subtree_));
  return enableMemory(dir + "/" + subtree_);
}

Status AppCgroups::prepare(const std::string& app, uint32_t index, uint64_t limit_bytes) {
  SCALWS_RETURN_IF_ERROR(setUp());
  SCALWS_RETURN_IF_ERROR(mkdirOk(appDir(app)));
  if (version_ == Version::kV2) SCALWS_RETURN_IF_ERROR(enableMemory(appDir(app)));
  std::string path = pathOf(app, index);
  SCALWS_RETURN_IF_ERROR(mkdirOk(path));
  std::string limit = std::to_string(limit_bytes);
  if (version_ == Version::kV2) {
    SCALWS_RETURN_IF_ERROR(writeValue(path + "/memory.max", limit));
    if (exists(path + "/memory.swap.max")) {
      SCALWS_RETURN_IF_ERROR(writeValue(path + "/memory.swap.max", "0"));
    }
    if (exists(path + "/memory.oom.group")) {
      SCALWS_RETURN_IF_ERROR(writeValue(path + "/memory.oom.group", "1"));
    }
    return Status();
  }
  // memsw (memory + swap) may never be below the memory limit: which goes first depends
  // on whether the limit falls or rises.
  std::string memsw = path + "/memory.memsw.limit_in_bytes";
  Status limited = writeValue(path + "/memory.limit_in_bytes", limit);
  if (!limited.ok() && exists(memsw)) {
    SCALWS_RETURN_IF_ERROR(writeValue(memsw, limit));
    limited = writeValue(path + "/memory.limit_in_bytes", limit);
  }
  SCALWS_RETURN_IF_ERROR(limited);
  if (exists(memsw)) return writeValue(memsw, limit);
  // Swap not accounted: keep the cgroup's pages out of it so the limit ends in a kill.
  if (exists(path + "/memory.swappiness")) return writeValue(path + "/memory.swappiness", "0");
  return Status();
}

Status AppCgroups::remove(const std::string& app) {
  if (!usable()) return Status();
  std::string dir = appDir(app);
  Status first;
  if (DIR* d = ::opendir(dir.c_str())) {
    std::vector<std::string> children;
    while (dirent* e = ::readdir(d)) {
      if (e->d_type == DT_DIR && e->d_name[0] != '.') children.push_back(e->d_name);
    }
    ::closedir(d);
    for (const std::string& child : children) {
      Status s = removeCgroupDir(dir + "/" + child);
      if (first.ok()) first = s;
    }
  }
  Status s = removeCgroupDir(dir);
  if (!first.ok()) return first;
  if (s.ok()) {
    // Empty once no app is left (else EBUSY or ENOTEMPTY, and it stays); made again by
    // setUp() when an app with a limit starts.
    if (::rmdir((mount_ + base_ + "/" + subtree_).c_str()) == 0) set_up_ = false;
  }
  return s;
}

std::optional<CgroupUsage> AppCgroups::usage(const std::string& path) const {
  CgroupUsage u;
  if (usable()) {
    std::istringstream in(readText(path + "/memory.stat"));
    std::string k;
    unsigned long long v = 0;
    while (in >> k >> v) {
      // Kernels before 5.9 count one "workingset_refault"; later ones split it.
      if (k == "workingset_refault" || k == "workingset_refault_file" ||
          k == "workingset_refault_anon") {
        u.refaulted_pages += v;
      } else if (k == "pgmajfault") {
        u.major_faults = v;
      }
    }
  }
  if (version_ == Version::kV2) {
    std::optional<uint64_t> current = readNumber(path + "/memory.current");
    if (!current) return std::nullopt;
    u.current_bytes = *current;
    u.peak_bytes = readNumber(path + "/memory.peak").value_or(0);
    u.limit_bytes = readNumber(path + "/memory.max").value_or(0);
    u.oom_kills = readKeyed(path + "/memory.events", "oom_kill");
    return u;
  }
  if (version_ == Version::kV1) {
    std::optional<uint64_t> current = readNumber(path + "/memory.usage_in_bytes");
    if (!current) return std::nullopt;
    u.current_bytes = *current;
    u.peak_bytes = readNumber(path + "/memory.max_usage_in_bytes").value_or(0);
    u.limit_bytes = readNumber(path + "/memory.limit_in_bytes").value_or(0);
    if (u.limit_bytes >= kV1Unlimited) u.limit_bytes = 0;
    u.oom_kills = readKeyed(path + "/memory.oom_control", "oom_kill");
    return u;
  }
  return std::nullopt;
}

bool AppCgroups::contains(const std::string& path, pid_t pid) const {
  if (!usable() || path.compare(0, mount_.size(), mount_) != 0) return false;
  std::string text = readText(root_ + "/proc/" + std::to_string(pid) + "/cgroup");
  std::optional<std::string> line =
      cgroupLine(text, version_ == Version::kV2 ? std::string() : std::string("memory"));
  if (!line) return false;
  // /proc/PID/cgroup names the path from the hierarchy's root, the mount shows it from
  // the mount's root.
  return *line == mount_root_ + path.substr(mount_.size());
}

}  // namespace scalws::controller
