// The exposition text, read back by a small parser of the 0.0.4 text format: every sample
// belongs to the family declared just before it, each family has one HELP and one TYPE,
// histogram buckets are cumulative with increasing `le` and +Inf == _count.
#include "controller/metrics/metrics_prometheus.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>

namespace scalws::controller {
namespace {

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  std::string value;
};

struct Parsed {
  std::map<std::string, std::string> types;
  std::vector<Sample> samples;
  std::vector<std::string> errors;
};

// name{k="v",...} value — label values may hold escaped \" \\ \n.
Parsed parse(const std::string& text) {
  Parsed p;
  std::istringstream in(text);
  std::string line;
  std::string family;
  std::map<std::string, int> helps;
  while (std::getline(in, line)) {
    if (line.rfind("# HELP ", 0) == 0) {
      std::string name = line.substr(7, line.find(' ', 7) - 7);
      if (++helps[name] > 1) p.errors.push_back("two HELP lines for " + name);
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream t(line.substr(7));
      std::string name, type;
      t >> name >> type;
      if (p.types.count(name) != 0) p.errors.push_back("two TYPE lines for " + name);
      p.types[name] = type;
      family = name;
      continue;
    }
    Sample s;
    size_t brace = line.find('{');
    s.name = line.substr(0, brace);
    size_t i = brace + 1;
    while (i < line.size() && line[i] != '}') {
      size_t eq = line.find('=', i);
      std::string key = line.substr(i, eq - i);
      std::string value;
      size_t j = eq + 2;  // past ="
      for (; line[j] != '"'; ++j) {
        if (line[j] == '\\') {
          ++j;
          value += line[j] == 'n' ? '\n' : line[j];
        } else {
          value += line[j];
        }
      }
      s.labels[key] = value;
      i = j + 1;
      if (line[i] == ',') ++i;
    }
    s.value = line.substr(i + 2);
    bool belongs = s.name == family || (p.types[family] == "histogram" &&
                                        (s.name == family + "_bucket" ||
                                         s.name == family + "_sum" || s.name == family + "_count"));
    if (!belongs) p.errors.push_back(s.name + " outside its family (" + family + ")");
    p.samples.push_back(std::move(s));
  }
  return p;
}

PrometheusInstance instance(const std::string& name, uint64_t k) {
  PrometheusInstance i;
  i.name = name;
  i.total.requests_by_class = {0, 30 * k, 1, 10 * k, 2};
  i.total.requests_by_action[0] = 5 * k;
  i.total.requests_by_action[1] = 38 * k;
  i.total.bytes_out = 12345;
  i.total.cpu_us = 1'500'000;
  i.total.php_wait_us = 250;
  i.total.conn_active = 3;
  i.total.latency[0] = 1;
  i.total.latency[1] = 0;
  i.total.latency[9] = 20 * k;   // ~23 µs
  i.total.latency[30] = 20 * k;  // ~33 ms
  i.total.latency[53] = 2;       // beyond 67 s
  i.total.latency_sum_us = 3'000'001;
  i.processes = 2;
  return i;
}

TEST(MetricsPrometheus, ParsesWithOneTypePerFamilyAndLabelsByInstanceClassAction) {
  std::string text = renderPrometheus({instance("web", 1), instance("shop", 2)});
  Parsed p = parse(text);
  EXPECT_TRUE(p.errors.empty()) << p.errors.front();
  EXPECT_EQ(p.types["scalws_requests_total"], "counter");
  EXPECT_EQ(p.types["scalws_connections_active"], "gauge");
  EXPECT_EQ(p.types["scalws_request_duration_seconds"], "histogram");
  for (const auto& [name, type] : p.types) {
    if (type == "counter") {
      EXPECT_TRUE(name.ends_with("_total")) << name;
    }
    EXPECT_TRUE(name.rfind("scalws_", 0) == 0) << name;
  }
  int seen = 0;
  for (const Sample& s : p.samples) {
    ASSERT_TRUE(s.labels.count("instance")) << s.name;
    for (const auto& [key, value] : s.labels) {
      EXPECT_TRUE(key == "instance" || key == "class" || key == "action" || key == "le") << key;
    }
    if (s.name == "scalws_requests_total" && s.labels.at("instance") == "shop" &&
        s.labels.at("class") == "4xx") {
      EXPECT_EQ(s.value, "20");
      ++seen;
    }
    if (s.name == "scalws_action_requests_total" && s.labels.at("instance") == "web" &&
        s.labels.at("action") == "respond") {
      EXPECT_EQ(s.value, "38");
      ++seen;
    }
    if (s.name == "scalws_cpu_seconds_total" && s.labels.at("instance") == "web") {
      EXPECT_EQ(s.value, "1.5");
      ++seen;
    }
    if (s.name == "scalws_php_wait_seconds_total" && s.labels.at("instance") == "web") {
      EXPECT_EQ(s.value, "0.00025");
      ++seen;
    }
  }
  EXPECT_EQ(seen, 4);
}

TEST(MetricsPrometheus, HistogramBucketsAreCumulativeAndEndInInfEqualToCount) {
  Parsed p = parse(renderPrometheus({instance("web", 1)}));
  std::vector<std::pair<std::string, uint64_t>> buckets;
  std::string count, sum;
  for (const Sample& s : p.samples) {
    if (s.name == "scalws_request_duration_seconds_bucket") {
      buckets.emplace_back(s.labels.at("le"), std::stoull(s.value));
    }
    if (s.name == "scalws_request_duration_seconds_count") count = s.value;
    if (s.name == "scalws_request_duration_seconds_sum") sum = s.value;
  }
  ASSERT_EQ(buckets.size(), 28u);  // 1 µs .. 2^26 µs by octaves, then +Inf
  EXPECT_EQ(buckets.front().first, "0.000001");
  EXPECT_EQ(buckets.front().second, 1u);
  EXPECT_EQ(buckets[buckets.size() - 2].first, "67.108864");
  EXPECT_EQ(buckets.back().first, "+Inf");
  double last_le = -1;
  uint64_t last = 0;
  for (size_t i = 0; i + 1 < buckets.size(); ++i) {
    double le = std::stod(buckets[i].first);
    EXPECT_GT(le, last_le);
    EXPECT_GE(buckets[i].second, last);
    last_le = le;
    last = buckets[i].second;
  }
  EXPECT_EQ(buckets[buckets.size() - 2].second, 41u);
  EXPECT_EQ(buckets.back().second, 43u);
  EXPECT_EQ(count, "43");
  EXPECT_EQ(sum, "3.000001");
  // 23 µs falls under le=0.000032 but not under 0.000016.
  for (const auto& [le, n] : buckets) {
    if (le == "0.000016") {
      EXPECT_EQ(n, 1u);
    }
    if (le == "0.000032") {
      EXPECT_EQ(n, 21u);
    }
  }
}

TEST(MetricsPrometheus, LabelValuesAreEscaped) {
  EXPECT_EQ(prometheusLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  Parsed p = parse(renderPrometheus({instance("we\"ird", 1)}));
  EXPECT_TRUE(p.errors.empty());
  EXPECT_EQ(p.samples.front().labels.at("instance"), "we\"ird");
}

TEST(MetricsPrometheus, UpstreamServersAreLabelledByUpstreamAndServer) {
  PrometheusInstance web = instance("web", 1);
  common::metrics::UpstreamServerMetrics live;
  live.address = "10.0.0.7:9000";
  live.loops = 2;
  live.loops_down = 1;
  live.active = 4;
  live.requests = 99;
  live.latency_sum_us = 2'500'000;
  live.latency[12] = 90;
  live.latency[53] = 9;                         // beyond the last bound: only +Inf counts it
  common::metrics::UpstreamServerMetrics gone;  // only an ended worker's counts are left
  gone.address = "unix:/run/api.sock";
  gone.requests = 5;
  web.upstreams = {{"api", {live, gone}}};
  Parsed p = parse(renderPrometheus({web, instance("plain", 1)}));
  ASSERT_TRUE(p.errors.empty()) << p.errors.front();
  EXPECT_EQ(p.types["scalws_upstream_server_up"], "gauge");
  EXPECT_EQ(p.types["scalws_upstream_server_requests_total"], "counter");
  std::map<std::string, std::string> live_values;
  std::map<std::string, std::string> gone_values;
  for (const Sample& s : p.samples) {
    if (s.name.rfind("scalws_upstream_server_", 0) != 0) continue;
    EXPECT_EQ(s.labels.at("instance"), "web");
    EXPECT_EQ(s.labels.at("upstream"), "api");
    if (s.name.ends_with("_bucket")) {
      if (s.labels.at("server") == "10.0.0.7:9000" && s.labels.at("le") == "+Inf") {
        EXPECT_EQ(s.value, "99");
      }
      continue;
    }
    EXPECT_EQ(s.labels.size(), 3u);
    (s.labels.at("server") == "10.0.0.7:9000" ? live_values : gone_values)[s.name] = s.value;
  }
  EXPECT_EQ(live_values["scalws_upstream_server_up"], "0");
  EXPECT_EQ(live_values["scalws_upstream_server_active_requests"], "4");
  EXPECT_EQ(live_values["scalws_upstream_server_requests_total"], "99");
  EXPECT_EQ(live_values["scalws_upstream_server_response_seconds_sum"], "2.5");
  EXPECT_EQ(live_values["scalws_upstream_server_response_seconds_count"], "99");
  EXPECT_EQ(p.types["scalws_upstream_server_response_seconds"], "histogram");
  EXPECT_EQ(gone_values["scalws_upstream_server_requests_total"], "5");
  EXPECT_EQ(gone_values.count("scalws_upstream_server_up"), 0u);  // no gauges for it
  EXPECT_EQ(gone_values.count("scalws_upstream_server_idle_connections"), 0u);
}

TEST(MetricsPrometheus, NoInstancesStillDeclaresTheFamilies) {
  Parsed p = parse(renderPrometheus({}));
  EXPECT_TRUE(p.samples.empty());
  EXPECT_EQ(p.types.size(), 22u);
}

}  // namespace
}  // namespace scalws::controller
