// PollWindow (sim/include/naa/sim/poll_window.hpp, issue 31): when naa-sim's runner polls its
// socket before a blocking wait. Wall time is passed in, so the rules are checked exactly.
#include <catch2/catch.hpp>

#include <chrono>

#include "naa/sim/poll_window.hpp"

namespace {

using naa::sim::PollWindow;
using std::chrono::microseconds;
using T = PollWindow::Clock::time_point;

const T t0 = T{} + std::chrono::seconds(100);

}  // namespace

TEST_CASE("poll window: shut while idle, open for --poll-us after a datagram", "[sim][runner]") {
  PollWindow w(microseconds(50));
  w.note(0, t0);
  CHECK_FALSE(w.open(t0));  // nothing ever sent or read: an idle naa-sim never polls
  w.note(1, t0);            // a datagram read (a request) or sent (an answer)
  CHECK(w.open(t0));
  CHECK(w.open(t0 + microseconds(49)));
  CHECK_FALSE(w.open(t0 + microseconds(50)));
  CHECK(w.end(t0 + microseconds(10)) == t0 + microseconds(10));  // the caller's limit first
  CHECK(w.end(T::max()) == t0 + microseconds(50));
  // No new datagram: looking again later does not reopen it (a wake-up by a signal, a timer).
  w.note(1, t0 + microseconds(80));
  CHECK_FALSE(w.open(t0 + microseconds(80)));
}

TEST_CASE("poll window: a datagram read without an answer reopens it", "[sim][runner]") {
  // A call: the request is read, the step sends the ACK and the answer (2 datagrams), the
  // host's ACK of the answer is read 60 us later. The wait after that read must poll: the
  // host's next request follows it (issue 31; before, only a step that sent opened the window).
  PollWindow w(microseconds(50));
  w.note(1, t0);
  w.note(3, t0 + microseconds(5));
  CHECK_FALSE(w.open(t0 + microseconds(60)));
  w.note(4, t0 + microseconds(60));  // the host's ACK: read, nothing sent
  CHECK(w.open(t0 + microseconds(61)));
  CHECK(w.end(T::max()) == t0 + microseconds(110));
}

TEST_CASE("poll window: --poll-us 0 never polls", "[sim][runner]") {
  PollWindow w(microseconds(0));
  w.note(5, t0);
  CHECK_FALSE(w.open(t0));
}

TEST_CASE("poll window: moved() says exactly when note() would reopen it", "[sim][runner]") {
  // The runner reads the wall clock for note() only when moved() (issue 31): the two must agree,
  // or a datagram would leave the window shut (or a wait poll that should block).
  PollWindow w(microseconds(50));
  CHECK_FALSE(w.moved(0));  // nothing read or sent yet
  CHECK(w.moved(1));
  w.note(1, t0);
  CHECK_FALSE(w.moved(1));
  w.note(1, t0 + microseconds(100));  // not moved: the window stays as it was
  CHECK_FALSE(w.open(t0 + microseconds(60)));
  CHECK(w.moved(2));
  w.note(2, t0 + microseconds(100));
  CHECK(w.open(t0 + microseconds(149)));
  CHECK_FALSE(w.moved(2));
  PollWindow off(microseconds(0));
  CHECK_FALSE(off.moved(7));  // --poll-us 0: never reopened, so never a clock read
}
