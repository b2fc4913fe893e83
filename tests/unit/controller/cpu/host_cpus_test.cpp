#include "controller/cpu/host_cpus.h"

#include <gtest/gtest.h>

namespace scalws::controller::cpu {
namespace {

using common::CpuSet;
using common::StatusCode;

TEST(HostCpusTest, AffinityMinusReserved) {
  common::Result<CpuSet> host = hostCpus(CpuSet::range(0, 3), CpuSet({0, 2}));
  ASSERT_TRUE(host.ok()) << host.status().message();
  EXPECT_EQ(*host, CpuSet({1, 3}));
  host = hostCpus(CpuSet::range(0, 3), CpuSet());
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(*host, CpuSet::range(0, 3));
}

TEST(HostCpusTest, ReservingACpuOutsideTheAffinityIsRefused) {
  common::Result<CpuSet> host = hostCpus(CpuSet::range(0, 3), CpuSet({1, 12}));
  ASSERT_FALSE(host.ok());
  EXPECT_EQ(host.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(host.status().message().find("CPU(s) 12 "), std::string::npos)
      << host.status().message();
  EXPECT_NE(host.status().message().find("0-3"), std::string::npos);
}

TEST(HostCpusTest, ReservingEverythingIsRefused) {
  common::Result<CpuSet> host = hostCpus(CpuSet({2, 3}), CpuSet({2, 3}));
  ASSERT_FALSE(host.ok());
  EXPECT_NE(host.status().message().find("leaves no CPU"), std::string::npos)
      << host.status().message();
}

TEST(HostCpusTest, FromOptionsUsesTheRealAffinity) {
  common::Result<CpuSet> affinity = common::currentAffinity();
  ASSERT_TRUE(affinity.ok());
  common::Result<CpuSet> host = hostCpusFromOptions("");
  ASSERT_TRUE(host.ok()) << host.status().message();
  EXPECT_EQ(*host, *affinity);
  if (affinity->size() >= 2) {
    uint32_t first = affinity->ids().front();
    host = hostCpusFromOptions(std::to_string(first));
    ASSERT_TRUE(host.ok()) << host.status().message();
    EXPECT_EQ(*host, affinity->minus(CpuSet({first})));
  }
}

TEST(HostCpusTest, FromOptionsNamesTheOptionOnParseErrors) {
  common::Result<CpuSet> host = hostCpusFromOptions("1,,2");
  ASSERT_FALSE(host.ok());
  EXPECT_EQ(host.status().message().rfind("--reserve-cpus: ", 0), 0u) << host.status().message();
}

}  // namespace
}  // namespace scalws::controller::cpu
