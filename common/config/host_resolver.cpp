#include "common/config/host_resolver.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <map>
#include <mutex>

namespace scalws::common::config {
namespace {

class ProcessResolver final : public HostResolver {
 public:
  Result<std::vector<std::string>> resolve(const std::string& host) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (sealed_) {
      auto known = known_.find(host);
      if (known != known_.end()) return known->second;
      return invalidArgument("cannot resolve \"" + host +
                             "\" inside the sandbox (it was not resolved when the worker "
                             "started); restart the worker to use a new host name");
    }
    Result<std::vector<std::string>> answer = lookUp(host);
    if (answer.ok()) known_[host] = *answer;
    return answer;
  }

  void seal() {
    std::lock_guard<std::mutex> lock(mutex_);
    sealed_ = true;
  }

 private:
  static Result<std::vector<std::string>> lookUp(const std::string& host) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_ADDRCONFIG;
    addrinfo* list = nullptr;
    int rc = getaddrinfo(host.c_str(), nullptr, &hints, &list);
    if (rc != 0) {
      return invalidArgument("cannot resolve \"" + host + "\": " + gai_strerror(rc));
    }
    std::vector<std::string> v4;
    std::vector<std::string> v6;
    for (addrinfo* a = list; a != nullptr; a = a->ai_next) {
      char text[INET6_ADDRSTRLEN];
      if (a->ai_family == AF_INET) {
        const auto* sin = reinterpret_cast<const sockaddr_in*>(a->ai_addr);
        if (inet_ntop(AF_INET, &sin->sin_addr, text, sizeof(text)) != nullptr) v4.push_back(text);
      } else if (a->ai_family == AF_INET6) {
        const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(a->ai_addr);
        if (inet_ntop(AF_INET6, &sin6->sin6_addr, text, sizeof(text)) != nullptr) {
          v6.push_back(text);
        }
      }
    }
    freeaddrinfo(list);
    std::vector<std::string> all;
    for (auto* family : {&v4, &v6}) {
      for (std::string& a : *family) {
        if (std::find(all.begin(), all.end(), a) == all.end()) all.push_back(std::move(a));
      }
    }
    if (all.empty()) return invalidArgument("\"" + host + "\" has no IPv4 or IPv6 address");
    return all;
  }

  std::mutex mutex_;
  bool sealed_ = false;
  std::map<std::string, std::vector<std::string>> known_;
};

ProcessResolver& instance() {
  static ProcessResolver resolver;
  return resolver;
}

}  // namespace

HostResolver& processResolver() {
  return instance();
}

void sealProcessResolver() {
  instance().seal();
}

bool isHostName(std::string_view text) {
  if (text.empty() || text.size() > 253) return false;
  size_t label = 0;
  bool all_digits_or_dots = true;
  char prev = '.';
  for (char c : text) {
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    bool digit = c >= '0' && c <= '9';
    if (c == '.') {
      if (label == 0 || prev == '-') return false;
      label = 0;
    } else if (alpha || digit || c == '-') {
      if (c == '-' && label == 0) return false;
      if (++label > 63) return false;
      all_digits_or_dots = all_digits_or_dots && !alpha && c != '-';
    } else {
      return false;
    }
    prev = c;
  }
  // A trailing '.' (the root) is fine; a dangling '-' or a dotted number is not a name.
  return prev != '-' && !all_digits_or_dots;
}

}  // namespace scalws::common::config
