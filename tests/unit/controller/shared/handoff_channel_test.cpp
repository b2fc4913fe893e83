// A hand-off channel: a descriptor crosses it, and its two ends are paired by the kernel's
// name of the receiving end, whatever copies of them are taken.
#include "controller/shared/handoff_channel.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

namespace scalws::controller {
namespace {

TEST(HandoffChannel, EndsArePairedByTheReceivingEndsName) {
  common::Result<HandoffChannel> a = HandoffChannel::make();
  common::Result<HandoffChannel> b = HandoffChannel::make();
  ASSERT_TRUE(a.ok() && b.ok());
  std::string name = receivingEndName(a->receive.get());
  ASSERT_FALSE(name.empty());
  EXPECT_EQ(sendingEndPeer(a->send.get()), name);
  EXPECT_NE(sendingEndPeer(b->send.get()), name);
  // A copy (what pidfd_getfd gives a restarted controller) says the same.
  int copy = ::dup(a->send.get());
  EXPECT_EQ(sendingEndPeer(copy), name);
  ::close(copy);
  EXPECT_TRUE(isChannelEnd(a->send.get()));
  EXPECT_TRUE(isChannelEnd(a->receive.get()));
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  EXPECT_FALSE(isChannelEnd(pipe_fds[0]));
  EXPECT_EQ(receivingEndName(pipe_fds[0]), "");
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

TEST(HandoffChannel, ADescriptorCrossesItAsOneMessage) {
  common::Result<HandoffChannel> channel = HandoffChannel::make();
  ASSERT_TRUE(channel.ok());
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  char byte = 'C';
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &pipe_fds[1], sizeof(int));
  ASSERT_EQ(::sendmsg(channel->send.get(), &msg, 0), 1);
  ::close(pipe_fds[1]);
  msghdr in{};
  char got = 0;
  iovec in_iov{&got, 1};
  alignas(cmsghdr) char in_control[CMSG_SPACE(sizeof(int))];
  in.msg_iov = &in_iov;
  in.msg_iovlen = 1;
  in.msg_control = in_control;
  in.msg_controllen = sizeof(in_control);
  ASSERT_EQ(::recvmsg(channel->receive.get(), &in, 0), 1);
  int fd = -1;
  std::memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&in)), sizeof(int));
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "x", 1), 1);
  char back = 0;
  ASSERT_EQ(::read(pipe_fds[0], &back, 1), 1);
  EXPECT_EQ(back, 'x');
  ::close(fd);
  ::close(pipe_fds[0]);
  // Nothing more queued: a non-blocking receive says so.
  EXPECT_EQ(::recv(channel->receive.get(), &got, 1, MSG_DONTWAIT), -1);
}

}  // namespace
}  // namespace scalws::controller
