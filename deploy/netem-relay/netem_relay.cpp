#include "deploy/netem-relay/netem_relay.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <deque>
#include <stdexcept>

namespace tessera::netem {

using Clock = std::chrono::steady_clock;
using asio::ip::tcp;

namespace {
class Session;
}

struct Relay::Shared {
  asio::io_context& io;
  LinkProfile profile;
  std::mt19937_64 rng;
  Clock::time_point link_free{};
  RelayCounters counters;
  std::vector<std::weak_ptr<Session>> sessions;
  bool stopped = false;

  Shared(asio::io_context& io_, LinkProfile p) : io(io_), profile(p), rng(p.seed) {}

  // When a chunk of `bytes` read now may leave, given the previous chunk of its direction
  // leaves at `previous`.
  Clock::time_point release_time(Clock::time_point previous, size_t bytes) {
    const auto now = Clock::now();
    auto hold = profile.delay;
    if (profile.jitter.count() > 0) {
      std::uniform_int_distribution<int64_t> jitter(-profile.jitter.count(), profile.jitter.count());
      hold += std::chrono::microseconds(jitter(rng));
    }
    hold = std::max(hold, std::chrono::microseconds(0));
    if (profile.loss > 0 && std::uniform_real_distribution<double>(0, 1)(rng) < profile.loss) hold += profile.retransmit;
    auto release = std::max(previous, now + hold);
    if (profile.rate_bits_per_s > 0) {
      const auto airtime = std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(double(bytes) * 8.0 / profile.rate_bits_per_s));
      link_free = std::max(release, link_free) + airtime;
      release = link_free;
    }
    return release;
  }
};

namespace {

// One direction of one connection: reads chunks from `from`, holds each until its release time,
// writes them to `to` in order. At end of input, after the last chunk, shuts `to` down for sending.
class Pipe {
 public:
  Pipe(Relay::Shared& shared, tcp::socket& from, tcp::socket& to, uint64_t& counter)
      : shared_(shared), from_(from), to_(to), timer_(shared.io), counter_(counter) {}

  template <class Owner>
  void start(std::shared_ptr<Owner> owner) { read(std::move(owner)); }
  bool done() const { return done_; }
  void cancel() { timer_.cancel(); }

 private:
  struct Chunk {
    std::vector<char> bytes;
    Clock::time_point release;
  };

  template <class Owner>
  void read(std::shared_ptr<Owner> owner) {
    if (queued_ >= shared_.profile.max_queued_bytes) {
      paused_ = true;
      return;
    }
    paused_ = false;
    buffer_.resize(64 * 1024);
    from_.async_read_some(asio::buffer(buffer_), [this, owner](std::error_code ec, size_t n) {
      if (ec) {
        if (ec != asio::error::eof) return owner->close();
        eof_ = true;
        return maybe_finish(owner);
      }
      Chunk chunk{std::vector<char>(buffer_.begin(), buffer_.begin() + std::ptrdiff_t(n)), {}};
      chunk.release = shared_.release_time(last_release_, n);
      last_release_ = chunk.release;
      queued_ += n;
      queue_.push_back(std::move(chunk));
      write(owner);
      read(owner);
    });
  }

  template <class Owner>
  void write(std::shared_ptr<Owner> owner) {
    if (writing_ || queue_.empty()) return;
    writing_ = true;
    timer_.expires_at(queue_.front().release);
    timer_.async_wait([this, owner](std::error_code ec) {
      if (ec) return owner->close();
      if (shared_.profile.partitioned) {  // look again shortly: the chunk leaves when the partition ends
        writing_ = false;
        queue_.front().release = Clock::now() + std::chrono::milliseconds(20);
        return write(owner);
      }
      asio::async_write(to_, asio::buffer(queue_.front().bytes), [this, owner](std::error_code ec2, size_t n) {
        if (ec2) return owner->close();
        counter_ += n;
        queued_ -= n;
        queue_.pop_front();
        writing_ = false;
        if (paused_ && queued_ < shared_.profile.max_queued_bytes) read(owner);
        if (!queue_.empty()) return write(owner);
        maybe_finish(owner);
      });
    });
  }

  template <class Owner>
  void maybe_finish(std::shared_ptr<Owner> owner) {
    if (!eof_ || writing_ || !queue_.empty() || done_) return;
    done_ = true;
    std::error_code ignored;
    to_.shutdown(tcp::socket::shutdown_send, ignored);
    owner->pipe_finished();
  }

  Relay::Shared& shared_;
  tcp::socket& from_;
  tcp::socket& to_;
  asio::steady_timer timer_;
  uint64_t& counter_;
  std::vector<char> buffer_;
  std::deque<Chunk> queue_;
  size_t queued_ = 0;
  Clock::time_point last_release_{};
  bool writing_ = false, paused_ = false, eof_ = false, done_ = false;
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(Relay::Shared& shared, tcp::socket client)
      : shared_(shared),
        client_(std::move(client)),
        upstream_(shared.io),
        resolver_(shared.io),
        to_target_(shared, client_, upstream_, shared.counters.bytes_to_target),
        from_target_(shared, upstream_, client_, shared.counters.bytes_from_target) {}

  void start(const net::HostPort& target) {
    auto self = shared_from_this();
    resolver_.async_resolve(target.host, std::to_string(target.port),
                            [this, self](std::error_code ec, tcp::resolver::results_type results) {
                              if (ec) return close();
                              asio::async_connect(upstream_, results, [this, self](std::error_code ec2, const tcp::endpoint&) {
                                if (ec2) return close();
                                std::error_code ignored;
                                client_.set_option(tcp::no_delay(true), ignored);
                                upstream_.set_option(tcp::no_delay(true), ignored);
                                to_target_.start(self);
                                from_target_.start(self);
                              });
                            });
  }

  void pipe_finished() {
    if (to_target_.done() && from_target_.done()) close();
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    std::error_code ignored;
    resolver_.cancel();
    to_target_.cancel();
    from_target_.cancel();
    client_.close(ignored);
    upstream_.close(ignored);
  }

 private:
  Relay::Shared& shared_;
  tcp::socket client_, upstream_;
  tcp::resolver resolver_;
  Pipe to_target_, from_target_;
  bool closed_ = false;
};

void accept_next(std::shared_ptr<Relay::Shared> shared, std::shared_ptr<tcp::acceptor> acceptor, net::HostPort target) {
  acceptor->async_accept([shared, acceptor, target](std::error_code ec, tcp::socket socket) {
    if (ec || shared->stopped) return;
    auto session = std::make_shared<Session>(*shared, std::move(socket));
    ++shared->counters.connections;
    std::erase_if(shared->sessions, [](const std::weak_ptr<Session>& s) { return s.expired(); });
    shared->sessions.push_back(session);
    session->start(target);
    accept_next(shared, acceptor, target);
  });
}

}  // namespace

Relay::Relay(asio::io_context& io, LinkProfile profile) : io_(io), shared_(std::make_shared<Shared>(io, profile)) {}

Relay::~Relay() { stop(); }

uint16_t Relay::add_route(const Route& route) {
  tcp::resolver resolver(io_);
  const auto endpoints = resolver.resolve(route.listen.host, std::to_string(route.listen.port));
  if (endpoints.empty()) throw std::runtime_error("cannot resolve " + route.listen.text());
  auto acceptor = std::make_shared<tcp::acceptor>(io_);
  const tcp::endpoint endpoint = *endpoints.begin();
  acceptor->open(endpoint.protocol());
  acceptor->set_option(tcp::acceptor::reuse_address(true));
  acceptor->bind(endpoint);
  acceptor->listen();
  acceptors_.push_back(acceptor);
  accept_next(shared_, acceptor, route.target);
  return acceptor->local_endpoint().port();
}

void Relay::stop() {
  shared_->stopped = true;
  std::error_code ignored;
  for (auto& acceptor : acceptors_) acceptor->close(ignored);
  acceptors_.clear();
  for (auto& weak : shared_->sessions)
    if (auto session = weak.lock()) asio::post(io_, [session] { session->close(); });
  shared_->sessions.clear();
}

RelayCounters Relay::counters() const { return shared_->counters; }

void Relay::set_profile(const LinkProfile& profile) {
  const uint64_t seed = shared_->profile.seed;
  shared_->profile = profile;
  shared_->profile.seed = seed;  // the random numbers go on, not restart
}

namespace {

// Splits "12.5ms" into 12.5 and "ms"; throws on anything but a non-negative number + unit.
std::pair<double, std::string> number_and_unit(const std::string& text, const std::string& what) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    throw std::invalid_argument(what + ": '" + text + "' is not a number with a unit");
  }
  if (!std::isfinite(value) || value < 0) throw std::invalid_argument(what + ": '" + text + "' must be >= 0");
  std::string unit = text.substr(used);
  std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return {value, unit};
}

}  // namespace

std::chrono::microseconds parse_duration(const std::string& text, const std::string& what) {
  auto [value, unit] = number_and_unit(text, what);
  double us = 0;
  if (unit.empty() || unit == "ms") us = value * 1e3;
  else if (unit == "us") us = value;
  else if (unit == "s") us = value * 1e6;
  else throw std::invalid_argument(what + ": unknown unit in '" + text + "' (use us, ms or s)");
  if (us > 3.6e9) throw std::invalid_argument(what + ": '" + text + "' is longer than an hour");
  return std::chrono::microseconds(int64_t(std::llround(us)));
}

double parse_rate(const std::string& text, const std::string& what) {
  auto [value, unit] = number_and_unit(text, what);
  if (unit == "bit" || unit == "bps") return value;
  if (unit == "kbit") return value * 1e3;
  if (unit == "mbit" || unit.empty()) return value * 1e6;
  if (unit == "gbit") return value * 1e9;
  throw std::invalid_argument(what + ": unknown unit in '" + text + "' (use kbit, mbit or gbit)");
}

LinkProfile parse_profile_words(const std::string& text, LinkProfile base) {
  size_t at = 0;
  while (at < text.size()) {
    const size_t begin = text.find_first_not_of(" \t\r\n", at);
    if (begin == std::string::npos) break;
    const size_t end = std::min(text.find_first_of(" \t\r\n", begin), text.size());
    const std::string word = text.substr(begin, end - begin);
    at = end;
    const size_t eq = word.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("'" + word + "' is not KEY=VALUE");
    const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
    if (key == "delay") base.delay = parse_duration(value, "delay");
    else if (key == "jitter") base.jitter = parse_duration(value, "jitter");
    else if (key == "rate") base.rate_bits_per_s = parse_rate(value, "rate");
    else if (key == "loss") {
      const std::string number = !value.empty() && value.back() == '%' ? value.substr(0, value.size() - 1) : value;
      const double percent = number_and_unit(number, "loss").first;
      if (percent > 100 || number_and_unit(number, "loss").second != "") throw std::invalid_argument("loss: '" + value + "' is not 0..100%");
      base.loss = percent / 100.0;
    } else if (key == "partition") {
      if (value != "on" && value != "off") throw std::invalid_argument("partition: '" + value + "' is not on or off");
      base.partitioned = value == "on";
    } else {
      throw std::invalid_argument("unknown setting '" + key + "' (delay, jitter, rate, loss, partition)");
    }
  }
  if (base.jitter > base.delay) throw std::invalid_argument("jitter must not exceed delay");
  return base;
}

}  // namespace tessera::netem
