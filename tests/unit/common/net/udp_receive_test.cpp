// Receiving datagrams with their destination address and ECN bits, in batches, and
// skipping what does not fit.
#include "common/net/udp_receive.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>

#include <memory>
#include <string>

#include "common/net/listen_socket.h"

namespace scalws::common::net {
namespace {

TEST(UdpReceive, DatagramsComeWithWhereTheyWereSentAndTheirEcn) {
  config::ListenConfig listen;
  listen.address = "0.0.0.0:0";
  listen.host = "0.0.0.0";
  Result<UniqueFd> server = bindUdpSocket(listen, false);
  ASSERT_TRUE(server.ok()) << server.status().message();
  Result<UdpBinding> binding = enableDatagramInfo(server->get());
  ASSERT_TRUE(binding.ok()) << binding.status().message();
  EXPECT_EQ(binding->family, AF_INET);
  ASSERT_NE(binding->port, 0);

  UniqueFd client(::socket(AF_INET, SOCK_DGRAM, 0));
  int tos = 0x02;  // ECT(0)
  ASSERT_EQ(::setsockopt(client.get(), IPPROTO_IP, IP_TOS, &tos, sizeof(tos)), 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(binding->port);
  inet_pton(AF_INET, "127.0.0.3",
            &to.sin_addr);  // the wildcard socket's answer must come from here
  std::string big(300, 'b');
  for (const std::string& payload : {std::string("first"), big, std::string("third")}) {
    ASSERT_EQ(::sendto(client.get(), payload.data(), payload.size(), 0,
                       reinterpret_cast<sockaddr*>(&to), sizeof(to)),
              static_cast<ssize_t>(payload.size()));
  }
  pollfd p{server->get(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 2000), 1);
  constexpr size_t kMax = 100;  // the 300-byte one is truncated, so skipped
  auto buffers = std::make_unique<uint8_t[]>(kMaxReceiveBatch * kMax);
  Datagram batch[kMaxReceiveBatch];
  size_t n = receiveDatagrams(server->get(), binding->port, batch, buffers.get(), kMax);
  ASSERT_EQ(n, 2u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(batch[0].data), batch[0].len), "first");
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(batch[1].data), batch[1].len), "third");
  for (size_t i = 0; i < n; ++i) {
    const auto* local = reinterpret_cast<const sockaddr_in*>(&batch[i].local.storage);
    char text[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &local->sin_addr, text, sizeof(text));
    EXPECT_EQ(std::string(text), "127.0.0.3");
    EXPECT_EQ(ntohs(local->sin_port), binding->port);
    EXPECT_EQ(batch[i].ecn, 2);
    EXPECT_EQ(batch[i].remote.len, sizeof(sockaddr_in));
  }
  EXPECT_EQ(receiveDatagrams(server->get(), binding->port, batch, buffers.get(), kMax), 0u);
}

}  // namespace
}  // namespace scalws::common::net
