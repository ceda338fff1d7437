#include "support/tcp_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace boxoffice::testing {

TcpProxy::TcpProxy(unsigned short target_port) : target_(target_port) {
  listener_ = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address);
  listen(listener_, 64);
  socklen_t length = sizeof address;
  getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
  port_ = ntohs(address.sin_port);
  acceptor_ = std::thread([this] { Accept(); });
}

TcpProxy::~TcpProxy() {
  stop_ = true;
  shutdown(listener_, SHUT_RDWR);
  close(listener_);
  acceptor_.join();
  CutAll();
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mu_);
    threads.swap(threads_);
  }
  for (auto& t : threads) t.join();
  for (int fd : sockets_) close(fd);
}

void TcpProxy::CutAll() {
  std::lock_guard lock(mu_);
  for (int fd : sockets_) shutdown(fd, SHUT_RDWR);
}

void TcpProxy::Accept() {
  while (!stop_) {
    pollfd p{listener_, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    const int client = accept(listener_, nullptr, nullptr);
    if (client < 0) continue;
    const int server = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(target_);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(server, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      close(client);
      close(server);
      continue;
    }
    std::lock_guard lock(mu_);
    sockets_.push_back(client);
    sockets_.push_back(server);
    threads_.emplace_back([this, client, server] { Pump(client, server, false); });
    threads_.emplace_back([this, client, server] { Pump(server, client, true); });
  }
}

void TcpProxy::Pump(int from, int to, bool answers) {
  char buf[16 * 1024];
  for (;;) {
    const ssize_t n = read(from, buf, sizeof buf);
    if (n <= 0) break;
    if (answers && swallow_) continue;
    // (send with MSG_NOSIGNAL: a peer gone must not end the test with SIGPIPE.)
    if (send(to, buf, static_cast<size_t>(n), MSG_NOSIGNAL) != n) break;
  }
  shutdown(to, SHUT_RDWR);
  shutdown(from, SHUT_RDWR);
}

}  // namespace boxoffice::testing
