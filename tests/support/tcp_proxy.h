// A TCP proxy on loopback for tests of what crosses a network: it forwards every connection
// to a target port, and can be told to swallow what the target answers (its bytes read and
// dropped) while the client's still reach the target: a request that is carried out but
// whose answer is lost, as on a link that fails one way.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace boxoffice::testing {

class TcpProxy {
 public:
  explicit TcpProxy(unsigned short target_port);
  ~TcpProxy();
  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;

  unsigned short port() const { return port_; }
  // While set, the target's answers are read and dropped (the client hears nothing).
  void SwallowAnswers(bool swallow) { swallow_ = swallow; }
  // Closes every connection open now (new ones are forwarded as before).
  void CutAll();

 private:
  void Accept();
  void Pump(int from, int to, bool answers);

  const unsigned short target_;
  int listener_ = -1;
  unsigned short port_ = 0;
  std::atomic<bool> swallow_{false};
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<int> sockets_;          // guarded by mu_
  std::vector<std::thread> threads_;  // guarded by mu_
  std::thread acceptor_;
};

}  // namespace boxoffice::testing
