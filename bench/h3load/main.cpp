// scalws-h3load: an HTTP/3 load generator for bench/ (Debian's h2load speaks no HTTP/3).
// One thread, N connections × M concurrent streams of GET requests, for a number of
// requests or a duration; prints h2load's summary lines (so bench.py reads both alike)
// plus latency percentiles.
//
//   scalws-h3load [-c N] [-m M] [-n REQUESTS | -D SECONDS] [--sni NAME] [--reset] [--no-gro]
//                 URL...
//
// --reset cancels every request right after sending it (RESET_STREAM + STOP_SENDING):
// the rapid-reset pattern, for the server's flood defences, not for measuring.
// --no-gro reads one datagram per call instead of asking the kernel for UDP_GRO trains; on
// loopback the server then also pays for splitting its GSO trains (bench/README.md).
// Exit status 0 when every request got a 2xx answer.
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/h3load/client_connection.h"

namespace {

using scalws::bench::ClientConnection;
using scalws::bench::RequestResult;
using scalws::bench::Target;

uint64_t nowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

struct Options {
  size_t connections = 1;
  size_t streams = 1;
  uint64_t requests = 1;
  double duration = 0;  // seconds; 0: run `requests`
  bool reset = false;
  bool gro = true;
  std::string sni;
  std::vector<std::string> urls;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "scalws-h3load: %s\nusage: scalws-h3load [-c N] [-m M] [-n REQUESTS | -D "
               "SECONDS] [--sni NAME] [--reset] [--no-gro] https://HOST:PORT/PATH...\n",
               why);
  std::exit(2);
}

Options parseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    if (a == "-c") {
      o.connections = std::strtoull(value().c_str(), nullptr, 10);
    } else if (a == "-m") {
      o.streams = std::strtoull(value().c_str(), nullptr, 10);
    } else if (a == "-n") {
      o.requests = std::strtoull(value().c_str(), nullptr, 10);
    } else if (a == "-D") {
      o.duration = std::strtod(value().c_str(), nullptr);
    } else if (a == "--sni") {
      o.sni = value();
    } else if (a == "--reset") {
      o.reset = true;
    } else if (a == "--no-gro") {
      o.gro = false;
    } else if (a.rfind("https://", 0) == 0) {
      o.urls.push_back(a);
    } else {
      usage(("unknown argument " + a).c_str());
    }
  }
  if (o.urls.empty()) usage("no URL");
  if (o.connections == 0 || o.streams == 0) usage("-c and -m must be at least 1");
  return o;
}

// https://HOST:PORT/PATH, HOST a literal address or a name resolved once.
Target parseTarget(const Options& o) {
  Target t;
  t.gro = o.gro;
  for (const std::string& url : o.urls) {
    std::string rest = url.substr(8);
    size_t slash = rest.find('/');
    std::string authority = rest.substr(0, slash);
    t.paths.push_back(slash == std::string::npos ? "/" : rest.substr(slash));
    if (!t.authority.empty()) continue;
    t.authority = authority;
    std::string host = authority;
    std::string port = "443";
    if (!host.empty() && host.front() == '[') {
      size_t end = host.find(']');
      if (end + 1 < host.size() && host[end + 1] == ':') port = host.substr(end + 2);
      host = host.substr(1, end - 1);
    } else if (size_t colon = host.rfind(':'); colon != std::string::npos) {
      port = host.substr(colon + 1);
      host = host.substr(0, colon);
    }
    addrinfo hints{};
    hints.ai_socktype = SOCK_DGRAM;
    addrinfo* res = nullptr;
    if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0 || res == nullptr) {
      usage(("cannot resolve " + host).c_str());
    }
    std::memcpy(&t.address, res->ai_addr, res->ai_addrlen);
    t.address_len = res->ai_addrlen;
    freeaddrinfo(res);
    in6_addr unused;
    bool literal = inet_pton(AF_INET, host.c_str(), &unused) == 1 ||
                   inet_pton(AF_INET6, host.c_str(), &unused) == 1;
    t.sni = !o.sni.empty() ? o.sni : (literal ? "" : host);
  }
  return t;
}

struct Stats {
  uint64_t started = 0;
  uint64_t done = 0;
  uint64_t by_class[6] = {};  // [2] 2xx ... [5] 5xx; [0] no answer
  uint64_t bytes = 0;
  std::vector<uint32_t> latency_us;
};

uint32_t percentile(const std::vector<uint32_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t i =
      std::min(sorted.size() - 1, static_cast<size_t>(p * static_cast<double>(sorted.size())));
  return sorted[i];
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parseArgs(argc, argv);
  Target target = parseTarget(o);
  Stats stats;
  stats.latency_us.reserve(1 << 20);
  const uint64_t start = nowNs();
  const uint64_t stop_at = o.duration > 0 ? start + static_cast<uint64_t>(o.duration * 1e9) : 0;
  bool stopping = false;
  auto want_more = [&]() {
    if (stopping) return false;
    if (stop_at == 0 && stats.started >= o.requests) return false;
    ++stats.started;
    return true;
  };
  auto on_done = [&](const RequestResult& r) {
    if (stopping && stop_at != 0) return;  // past the window: not counted
    ++stats.done;
    int cls = r.status >= 200 && r.status < 600 ? r.status / 100 : 0;
    ++stats.by_class[cls];
    stats.bytes += r.bytes;
    stats.latency_us.push_back(static_cast<uint32_t>(r.latency_ns / 1000));
  };

  std::vector<std::unique_ptr<ClientConnection>> conns;
  for (size_t i = 0; i < o.connections; ++i) {
    conns.push_back(
        std::make_unique<ClientConnection>(target, o.streams, o.reset, on_done, want_more));
    conns.back()->start(nowNs());
  }
  std::vector<pollfd> fds;
  uint64_t end = start;
  for (;;) {
    uint64_t now = nowNs();
    if (stop_at != 0 && now >= stop_at && !stopping) {
      stopping = true;
      end = now;
      break;
    }
    bool busy = false;
    uint64_t next = now + 100'000'000;
    fds.clear();
    for (auto& c : conns) {
      if (c->closed()) continue;
      if (stop_at != 0 || c->inFlight() > 0 || stats.started < o.requests ||
          !c->handshakeCompleted()) {
        busy = true;
      }
      fds.push_back(pollfd{c->fd(), POLLIN, 0});
      next = std::min(next, c->expiry());
    }
    if (!busy) break;
    int timeout = next > now ? static_cast<int>((next - now + 999'999) / 1'000'000) : 0;
    poll(fds.data(), fds.size(), timeout);
    now = nowNs();
    size_t k = 0;
    for (auto& c : conns) {
      if (c->closed()) continue;
      if (k < fds.size() && fds[k].fd == c->fd() && (fds[k].revents & POLLIN)) c->onReadable(now);
      ++k;
      if (!c->closed() && c->expiry() <= now) c->onTimer(now);
    }
    end = now;
  }
  size_t failed = 0;
  std::map<std::string, size_t> reasons;
  for (auto& c : conns) {
    if (!c->handshakeCompleted() || !c->closeReason().empty()) {
      ++failed;
      reasons[c->closeReason().empty() ? "no handshake" : c->closeReason()]++;
    }
    c->close(nowNs());
  }
  double seconds = static_cast<double>(end - start) / 1e9;
  std::sort(stats.latency_us.begin(), stats.latency_us.end());
  double mean = 0;
  for (uint32_t v : stats.latency_us) mean += v;
  if (!stats.latency_us.empty()) mean /= static_cast<double>(stats.latency_us.size());
  uint64_t ok = stats.by_class[2];
  std::printf("finished in %.2fs, %.2f req/s, %.2fMB/s\n", seconds,
              seconds > 0 ? static_cast<double>(stats.done) / seconds : 0.0,
              seconds > 0 ? static_cast<double>(stats.bytes) / seconds / 1e6 : 0.0);
  std::printf(
      "requests: %llu total, %llu started, %llu done, %llu succeeded, %llu failed, %llu "
      "errored, 0 timeout\n",
      static_cast<unsigned long long>(stop_at ? stats.started : o.requests),
      static_cast<unsigned long long>(stats.started), static_cast<unsigned long long>(stats.done),
      static_cast<unsigned long long>(ok), static_cast<unsigned long long>(stats.done - ok),
      static_cast<unsigned long long>(stats.by_class[0]));
  std::printf("status codes: %llu 2xx, %llu 3xx, %llu 4xx, %llu 5xx\n",
              static_cast<unsigned long long>(stats.by_class[2]),
              static_cast<unsigned long long>(stats.by_class[3]),
              static_cast<unsigned long long>(stats.by_class[4]),
              static_cast<unsigned long long>(stats.by_class[5]));
  std::printf("traffic: %llu bytes of response bodies\n",
              static_cast<unsigned long long>(stats.bytes));
  std::printf("latency (us): min %u mean %.0f p50 %u p90 %u p99 %u max %u\n",
              percentile(stats.latency_us, 0), mean, percentile(stats.latency_us, 0.5),
              percentile(stats.latency_us, 0.9), percentile(stats.latency_us, 0.99),
              stats.latency_us.empty() ? 0 : stats.latency_us.back());
  std::printf("connections: %zu ok, %zu failed\n", conns.size() - failed, failed);
  for (auto& [why, n] : reasons) std::printf("  %zu: %s\n", n, why.c_str());
  bool all_ok = stats.done > 0 && ok == stats.done && (stop_at != 0 || stats.done == o.requests);
  return all_ok ? 0 : 1;
}
