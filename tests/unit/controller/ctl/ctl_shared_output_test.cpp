#include "controller/ctl/ctl_shared_output.h"

#include <gtest/gtest.h>

namespace scalws::ctl {
namespace {

using ipc::Json;

Json address() {
  return {{"address", "127.0.0.1:443"},
          {"tls", true},
          {"default", "home"},
          {"fronts", {{{"slot", 0}, {"pid", 321}, {"state", "ready"}, {"restarts", 1}}}},
          {"instances",
           {{{"name", "shop"},
             {"names", {"*.shop.example", "shop.example"}},
             {"default", false},
             {"running", true},
             {"workers_up", 2},
             {"handoffs", 40}},
            {{"name", "home"},
             {"names", Json::array()},
             {"default", true},
             {"running", false},
             {"workers_up", 0},
             {"handoffs", 2}}}},
          {"counters",
           {{"accepted", 45},
            {"handed_off", 42},
            {"unknown_name", 1},
            {"unavailable", 2},
            {"peek_timeouts", 0},
            {"invalid", 0},
            {"h2c_refused", 0},
            {"queue_full", 0},
            {"evicted", 0},
            {"waiting", 0}}}};
}

TEST(CtlSharedOutputTest, AnAddressWithItsFrontsFiguresAndNames) {
  std::string out = renderSharedAddresses(Json::array({address()}));
  EXPECT_NE(out.find("shared address 127.0.0.1:443 (TLS, by SNI)"), std::string::npos) << out;
  EXPECT_NE(out.find("ready (pid 321), 1 restart(s)"), std::string::npos) << out;
  EXPECT_NE(out.find("45 accepted, 42 handed over, 0 waiting now"), std::string::npos) << out;
  EXPECT_NE(out.find("1 unknown name, 2 not running"), std::string::npos) << out;
  EXPECT_NE(out.find("shop      *.shop.example shop.example  -        2 up"), std::string::npos)
      << out;
  EXPECT_NE(out.find("home      -                            yes      stopped"), std::string::npos)
      << out;
}

TEST(CtlSharedOutputTest, NothingSharedSaysNothing) {
  EXPECT_EQ(renderSharedAddresses(Json::array()), "");
  EXPECT_EQ(renderSharedAddresses(Json(nullptr)), "");
  EXPECT_EQ(renderSharedHandoffs(Json::array()), "");
  EXPECT_EQ(renderSharedHandoffs(Json::array({{{"address", "127.0.0.1:80"}, {"handoffs", 7}}})),
            "shared address 127.0.0.1:80: 7 connection(s) handed to it since its fronts started\n");
}

TEST(CtlSharedOutputTest, WhatAWorkerCouldNotSendIsEscaped) {
  Json a = address();
  a["instances"][0]["names"] = {"evil\x1b[2Jname"};
  std::string out = renderSharedAddresses(Json::array({a}));
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
}

}  // namespace
}  // namespace scalws::ctl
